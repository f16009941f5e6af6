// Copyright 2026 The MuJoCo implicitpos Authors
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

// The markdown of mjpos_bench: every table and note it writes, from the results of the studies.

#include <algorithm>
#include <cmath>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "benchmark/mjpos_bench.h"

namespace mjpos::bench {

void WriteCost(std::ostream& md, const Options& opt, const std::string& machine,
               const std::string& version, const Cases& cases, const std::string& callgrind_note) {
  md << "# mjENBL_IMPLICITPOS benchmark results\n\n";
  md << "- machine: " << machine << "\n";
  md << "- source: " << version << "\n";
  md << "- integrator: implicit; Google Benchmark " << opt.repetitions
     << " interleaved off/on repetitions per model, " << opt.warmup
     << " warm-up steps (flag off), batches of " << kBatchSteps
     << " steps from the restored state; times are CPU time per step; instructions per step "
        "inside mj_step from callgrind\n";
  md << "- raw Google Benchmark output (one line per run): `" << opt.raw_log << "`\n\n";

  // part 1 table
  md << "## Cost of the flag (ms per step)\n\n";
  md << "| model | nv | h (ms) | warm-up stable | flag off: median [min, max] | "
        "flag on: median [min, max] | on/off: median of paired ratios [min, max] | "
        "instr/step off | instr/step on | instr ratio |\n";
  md << "|---|---|---|---|---|---|---|---|---|---|\n";
  std::ostringstream rst;
  double scatter_wall = 0, scatter_cpu = 0;  // largest deviation of a time from its median
  bool any_timed = false, any_counted = false;
  for (auto& c : cases) {
    bool timed = !c->cpu[0].empty() && c->cpu[0].size() == c->cpu[1].size();
    bool counted = std::isfinite(c->instr[0] + c->instr[1]);
    any_counted |= counted;
    std::string instr_ratio = counted ? Fmt("%.4f", c->instr[1] / c->instr[0]) : "n/a";
    std::string instr = Fmt("%s | %s | %s", Count(c->instr[0]).c_str(), Count(c->instr[1]).c_str(),
                            instr_ratio.c_str());
    if (!timed) {
      // e.g. --benchmark_filter=NOTHING: the instruction counts alone
      if (counted) {
        md << Fmt("| %s | %d | %g | %s | n/a | n/a | n/a | %s |\n", c->name.c_str(), c->m->nv,
                  1e3 * c->m->opt.timestep, c->stack.warm_stable ? "yes" : "NO", instr.c_str());
      }
      continue;
    }
    any_timed = true;
    std::vector<double> ratio;
    for (size_t r = 0; r < c->cpu[0].size(); r++) ratio.push_back(c->cpu[1][r] / c->cpu[0][r]);
    for (int on = 0; on < 2; on++) {
      for (double t : c->wall[on]) {
        scatter_wall = std::max(scatter_wall, std::abs(t / Median(c->wall[on]) - 1));
      }
      for (double t : c->cpu[on]) {
        scatter_cpu = std::max(scatter_cpu, std::abs(t / Median(c->cpu[on]) - 1));
      }
    }
    double off = 1e3 * Median(c->cpu[0]), on = 1e3 * Median(c->cpu[1]);
    md << Fmt("| %s | %d | %g | %s | %.4f [%.4f, %.4f] | %.4f [%.4f, %.4f] | %.4f [%.4f, %.4f] | "
              "%s |\n",
              c->name.c_str(), c->m->nv, 1e3 * c->m->opt.timestep,
              c->stack.warm_stable ? "yes" : "NO", off, 1e3 * Min(c->cpu[0]),
              1e3 * Max(c->cpu[0]), on, 1e3 * Min(c->cpu[1]), 1e3 * Max(c->cpu[1]),
              Median(ratio), Min(ratio), Max(ratio), instr.c_str());
    rst << c->name << ":\n\n"
        << ".. csv-table::\n"
        << "   :header: \"timing\", \"implicit\", \"implicit + implicitpos\"\n"
        << "   :widths: auto\n"
        << "   :align: left\n\n"
        << Fmt("   one step (ms), %.3g, %.3g\n", off, on)
        << Fmt("   steps/second, %.0f, %.0f\n\n", 1e3 / off, 1e3 / on);
  }
  md << "\n";
  if (any_timed && opt.repetitions > 1) {
    md << Fmt("Times scatter on a shared machine: in this run the wall-clock time per step of a "
              "repetition strayed up to %.0f%% from its median (CPU time: %.0f%%). ",
              100 * scatter_wall, 100 * scatter_cpu);
    if (any_counted) md << "The instruction ratio, which is deterministic, decides. ";
  }
  md << callgrind_note << "\n";
  md << "\nThe same medians as reStructuredText (style of MuJoCo's 2.3.3 changelog):\n\n```rst\n"
     << rst.str() << "```\n\n";

  // the applied force's outputs, from the same profiles
  std::ostringstream out;
  for (auto& c : cases) {
    if (!std::isfinite(c->outputs[0] + c->outputs[1] + c->instr[0] + c->instr[1])) continue;
    out << "| " << c->name;
    for (int on = 0; on < 2; on++) {
      out << Fmt(" | %s / %s | %.2f %%", Count(c->outputs[on]).c_str(), Count(c->instr[on]).c_str(),
                 100 * c->outputs[on] / (c->instr[on] - c->outputs[on]));
    }
    out << " |\n";
  }
  if (!out.str().empty()) {
    md << "The force the step applied (`actuator_force_step`, `qfrc_actuator_step`, "
          "`qfrc_smooth_step`): instructions per step inside `mj_stepForceImplicit`, inclusive "
          "(its callees and the code inlined into it), from the same profiles, and their share, "
          "outputs / (step − outputs): what a step with them costs over one without. With the "
          "flag on it includes the test of each term of `K` against its `forcerange`.\n\n"
          "| model | flag off: outputs / step | share | flag on: outputs / step | share |\n"
          "|---|---|---|---|---|\n"
       << out.str() << "\n";
  }
}

void WriteStack(std::ostream& md, const Cases& cases, const StackLimit* limit) {
  md << "## MuJoCo stack per implicit step (mjtNums)\n\n";
  md << "| model | nv | nbody | default nstack | used by one step (maxuse_stack) | "
        "nstack used here |\n|---|---|---|---|---|---|\n";
  for (auto& c : cases) {
    md << Fmt("| %s | %d | %d | %d | %d | %d%s |\n", c->name.c_str(), c->m->nv, c->m->nbody,
              c->stack.default_nstack, c->stack.needed, c->nstack_used,
              c->nstack_used != c->stack.default_nstack ? " (raised)" : "");
  }
  if (limit && limit->found) {
    md << Fmt("\nChains (ChainXml, no `<size>`): the default stack suffices up to N = %d; "
              "from N = %d on, one implicit step needs more. Checked by compiling with the "
              "default stack: chain%d %s; chain%d %s%s%s (the compiler's own test step, "
              "mj_step, runs out of stack).\n",
              limit->lo, limit->hi, limit->lo, limit->lo_compiles ? "compiles" : "FAILS",
              limit->hi, limit->hi_compiles ? "compiles" : "fails: \"", limit->hi_error.c_str(),
              limit->hi_compiles ? "" : "\"");
  }
  md << "\nSizing: `<size nstack=\"S\"/>` in the model, or `m->nstack = S` before `mj_makeData`, "
        "with S at least the used value above (mjData.maxuse_stack after a step with a large "
        "stack); stock 2.2.2's implicit step takes about 7 nv^2 + 18 nbody nv of it "
        "(mjd_smooth_vel's dense nv x nv matrix and mjd_rne_vel's 6 nv blocks).\n\n";
}

void WriteStiffness(std::ostream& md, const Options& opt, const std::vector<Part2Row>& rows) {
  md << "## Throughput at equal stiffness\n\n";
  md << Fmt("Per-joint servo gains kp_i = I_i (2 pi f_n)^2, kv_i = 2 zeta I_i (2 pi f_n), zeta = "
            "%g, I_i = 1/(M^-1)_ii at qpos0 (mj_solveM). Initial state: set points held "
            "(middle of the joint range, or qpos0), joints offset by +-%g rad. Stable: "
            "mjpos::StepStable over %g s simulated. Stock h: largest stable timestep, bisected "
            "geometrically in [%g, %g] s to a factor %g. Throughput: simulated seconds per "
            "wall-clock second and per CPU second, over repeated "
            "%g s trajectories (at least %g CPU s in all), median of %d interleaved "
            "stock/flag measurements; wall time is what a user waits, CPU time is robust "
            "to other load on the machine.\n\n",
            opt.zeta, kPerturbation, opt.sim_seconds, kMinTimestep, kMaxTimestep,
            opt.smoke ? 1.3 : 1.01, opt.sim_seconds, opt.smoke ? 0.0 : 0.3,
            opt.throughput_reps);
  md << "| model | f_n (Hz) | kp range | stock: largest stable h (ms) | flag: stable at 5 ms | "
        "sim s / wall s: stock, flag, flag/stock | sim s / CPU s: stock, flag, flag/stock | "
        "flag @ 5 ms, one hinge: delivered f (Hz), amplitude factor per step |\n"
        "|---|---|---|---|---|---|---|---|\n";
  for (const Part2Row& r : rows) {
    md << Fmt("| %s | %g | %.3g - %.3g | %s%.3f | %s | %.1f, %.1f, **%.2f** | "
              "%.1f, %.1f, **%.2f** | %.1f, %.3f |\n",
              r.subject.c_str(), r.fn, r.kp_min, r.kp_max, r.hmax_clipped ? ">= " : "",
              1e3 * r.hmax, r.flag_stable ? "yes" : "NO", r.stock_rate, r.flag_rate,
              r.stock_rate > 0 ? r.flag_rate / r.stock_rate : NAN, r.stock_rate_cpu,
              r.flag_rate_cpu, r.stock_rate_cpu > 0 ? r.flag_rate_cpu / r.stock_rate_cpu : NAN,
              r.flag_freq, r.flag_amp);
  }
  md << Fmt("\nAt h = 5 ms the flag's trajectory is heavily damped: the frequency it delivers "
            "saturates at pi/(2h) (%.0f Hz at 5 ms), so this table compares stability, not "
            "fidelity.\n", 1 / (4 * kFlagTimestep));
}

void WriteAccuracy(std::ostream& md, const std::vector<Part4Row>& rows) {
  md << "\n## Throughput at equal accuracy (tracking)\n\n";
  md << "The same subjects and servos as above (gains from f_n and zeta), every servo tracking its "
        "set point + 0.1 sin(W t + i) rad, W = 0.1 w_n, from the state on that motion. Tracking "
        "error of a scheme at timestep h: RMS, over the steps of one period of the motion and over "
        "the servos, of q - q_ref, relative to the motion's 0.1 rad; q_ref is stock implicit at "
        "h_ref = period/4000, its targets set at each of its steps. Largest h: on a geometric grid "
        "(factor 1.1) of multiples of h_ref, the largest up to which every h meets the bound and "
        "tracks stably for 0.5 s. Throughput: simulated seconds per wall second of the same "
        "tracking at that h (0.5 s trajectories, at least 0.2 CPU s; wall clock, noisy). Schemes: stock `implicit`, "
        "backward Euler (`implicitpos`), weighted (`implicitpos` + `posweight`).\n\n";
  md << "| model | f_n (Hz) | zeta | error bound | largest h (ms): stock, BE, weighted | "
        "h ratio: BE / stock, weighted / stock | sim s / wall s: stock, BE, weighted | "
        "throughput: BE / stock, weighted / stock |\n"
        "|---|---|---|---|---|---|---|---|\n";
  for (const Part4Row& r : rows) {
    auto ratio = [&](int s) { return r.rate[0] > 0 ? Fmt("%.2f", r.rate[s] / r.rate[0]) : "n/a"; };
    auto hratio = [&](int s) { return r.h[0] > 0 ? Fmt("%.2f", r.h[s] / r.h[0]) : "n/a"; };
    md << Fmt("| %s | %g | %g | %g %% | %.3f, %.3f, %.3f | ", r.subject.c_str(), r.fn, r.zeta,
              100 * r.tol, 1e3 * r.h[0], 1e3 * r.h[1], 1e3 * r.h[2])
       << hratio(1) << ", **" << hratio(2) << "** | "
       << Fmt("%.1f, %.1f, %.1f | ", r.rate[0], r.rate[1], r.rate[2]) << ratio(1) << ", **"
       << ratio(2) << "** |\n";
  }
}

void WriteCoupledAccuracy(std::ostream& md, const std::vector<Part5Row>& rows) {
  md << "\n## The weighted mode on coupled models\n\n";
  md << "Servos tuned per joint (each from its reflected inertia at qpos0 to one f_n and zeta), "
        "every class of input (a step of the set points, a free decay, sinusoidal targets at "
        "W/w_n = 0.02, 0.1, 0.3 and 1, a load: gravity on the chains and the arm, a generalized "
        "force on the humanoid), amplitude 0.01, windows of 20/w_n or one period of the target, "
        "at most 1 s; each scheme against stock `implicit` at h/100 with the same targets held "
        "over each step (support/accuracy.h). Columns: the worst class's RMS error of each scheme "
        "(relative to the amplitude; inf: diverged), and the weighted mode's worst ratio to the "
        "baseline, stock where it ran stably on every class, else backward Euler.\n\n";
  md << "| model | f_n (Hz) | zeta | h (ms) | h w_n | stock | backward Euler | weighted | "
        "weighted / baseline | worst class |\n|---|---|---|---|---|---|---|---|---|---|\n";
  double worst_stable = 0, worst_unstable = 0;
  int stable = 0;
  for (const Part5Row& r : rows) {
    md << Fmt("| %s | %g | %g | %g | %.3g | %.3g | %.3g | %.3g | %s%.3f%s | %s |\n",
              r.subject.c_str(), r.fn, r.zeta, 1e3 * r.h, r.hw, r.stock, r.backward_euler,
              r.weighted, r.ratio > 1.05 ? "**" : "", r.ratio, r.ratio > 1.05 ? "**" : "",
              r.worst.c_str());
    if (r.stock_stable) {
      stable++;
      worst_stable = std::max(worst_stable, r.ratio);
    } else {
      worst_unstable = std::max(worst_unstable, r.ratio);
    }
  }
  md << Fmt("\n%zu settings; stock stable in %d: there the weighted mode's worst ratio to stock is "
            "**%.3f**; in the other %zu, its worst ratio to backward Euler is **%.3f**.\n",
            rows.size(), stable, worst_stable, rows.size() - stable, worst_unstable);
}

void WriteTorqueLimits(std::ostream& md, const std::vector<Part6Row>& rows) {
  md << "\n## Torque limits\n\n";
  md << "Every servo limited by `forcerange` (servo humanoid: ±0.1 kp, the force at 0.1 rad of "
        "error, tracking targets 0.3 rad at 1 Hz around the standing pose, contact on; finger "
        "squeeze: ±half the squeeze kp·0.01), kv = kp/100, h = 5 ms, 2 s. An actuator-step is "
        "beyond the range when the force the step applied (`actuator_force_step`) exceeds a "
        "bound by more than 1e-9 of it; excess as a fraction of the bound. `actuator_force` "
        "itself is clamped and never leaves the range; Euler applies it as is.\n\n";
  md << "| model | kp | scheme | stable | actuator-steps beyond | largest excess | mean excess "
        "|\n|---|---|---|---|---|---|---|\n";
  for (const Part6Row& r : rows) {
    md << Fmt("| %s | %g | %s | %s | %d of %d (%.2f %%) | %.3g | %.3g |\n", r.subject.c_str(),
              r.kp, r.scheme.c_str(), r.stable ? "yes" : "**no**", r.beyond, r.samples,
              r.samples ? 100.0 * r.beyond / r.samples : 0.0, r.max_excess, r.mean_excess);
  }
}

namespace {

// the criteria of part 7: force and penetration within 2 %, ripple at most 0.5 %, slip within
// 10 % (or 0.1 mm/s)
bool ContactMatches(const ContactMetrics& c, const ContactMetrics& ref) {
  return c.stable && RelDiff(c.force, ref.force) <= 0.02 &&
         RelDiff(c.penetration, ref.penetration) <= 0.02 && c.ripple <= 0.005 &&
         std::abs(c.slip - ref.slip) <= std::max(0.1 * std::abs(ref.slip), 1e-4);
}

std::string ContactCell(const ContactMetrics& c, const ContactMetrics& ref, bool slip) {
  if (!c.stable) return "unstable";
  std::string cell = Fmt("%.3f / %.3f / %.2f %%", c.force / ref.force,
                         c.penetration / ref.penetration, 100 * c.ripple);
  if (slip) cell += Fmt(" / %.2f", 1e3 * c.slip);
  return ContactMatches(c, ref) ? cell : "**" + cell + "**";
}

}  // namespace

void WriteContact(std::ostream& md, const std::vector<Part7Row>& rows,
                  const std::vector<Part7DropRow>& drops) {
  md << "\n## Contact against the converged reference\n\n";
  md << "From the model's initial pose, targets held (ctrl 0), for 2 s or as long as the "
        "reference takes to come to rest (its metrics ending at half the time agree to 1 %; up to "
        "32 s); over the last 0.5 s, sampled every millisecond: the summed normal force of the "
        "contacts, the mean penetration, the "
        "ripple (standard deviation of the force over its mean) and the slip of the held box "
        "(mm/s). Reference: stock `implicit` at h/N, N doubled from the grid's 2 ms until force "
        "and penetration agree to 1 % over three halvings (support/contact.h); where MuJoCo's "
        "refsafe raises a constraint's time constant to 2h at the row's h (the servo humanoid's "
        "15 ms at 10 ms), from that h with the raised constants, as the step at h runs them. Each cell: force and penetration as "
        "ratios to the reference's, ripple, slip; in bold where a criterion fails (force or "
        "penetration off by more than 2 %, ripple above 0.5 %, slip off by more than 10 % and "
        "0.1 mm/s); 'unstable': a bad-state warning, a non-finite state or contact lost.\n\n";
  md << "| model | kp | kv | h | reference: seconds, h, force, penetration, slip | stock | flag | "
        "flag + posweight |\n|---|---|---|---|---|---|---|---|\n";
  int flag_ok = 0, weighted_ok = 0, stock_stable = 0, stock_ok = 0;
  for (const Part7Row& r : rows) {
    bool slip = r.model.find("box") != std::string::npos;
    std::string ref = r.h_ref ? Fmt("%g s, %g s, %.4g N, %.4g mm", r.seconds, r.h_ref,
                                    r.ref.force, 1e3 * r.ref.penetration)
                              : std::string("**not converged**");
    if (slip && r.h_ref) ref += Fmt(", %.3f mm/s", 1e3 * r.ref.slip);
    md << Fmt("| %s | %g | %g | %g ms | %s | %s | %s | %s |\n", r.model.c_str(), r.kp, r.kv,
              1e3 * r.h, ref.c_str(), ContactCell(r.stock, r.ref, slip).c_str(),
              ContactCell(r.flag, r.ref, slip).c_str(),
              ContactCell(r.weighted, r.ref, slip).c_str());
    flag_ok += r.h_ref && ContactMatches(r.flag, r.ref);
    weighted_ok += r.h_ref && ContactMatches(r.weighted, r.ref);
    stock_stable += r.stock.stable;
    stock_ok += r.h_ref && ContactMatches(r.stock, r.ref);
  }
  md << Fmt("\n%zu rows: the flag meets every criterion in **%d**, the weighted mode in **%d**; "
            "stock is stable in %d and meets them in %d.\n",
            rows.size(), flag_ok, weighted_ok, stock_stable, stock_ok);

  md << "\n### A drop\n\n"
        "The standing quadruped released 0.1 m above its standing height (it lands at 1.4 m/s), "
        "1 s. Each cell: the peak of the summed normal force averaged over 10 ms windows, the "
        "torso's lowest height and its rebound (highest after the lowest, minus its height at "
        "the end), the first as a ratio to the reference's, the others as differences in mm; "
        "`discrete` is in the peer table (peer-results.md). With kv 0 the reference does not "
        "converge: the undamped legs bounce the torso by a rebound that changes by up to 12 mm "
        "between halvings (peak force and lowest height converge).\n\n";
  md << "| kp | kv | h | reference: h, peak force, lowest, rebound | stock | flag | "
        "flag + posweight |\n|---|---|---|---|---|---|---|\n";
  auto cell = [](const DropMetrics& c, const DropMetrics& ref) {
    if (!c.stable) return std::string("unstable");
    return Fmt("%.3f / %+.2f / %+.2f", c.peak_force / ref.peak_force,
               1e3 * (c.lowest - ref.lowest), 1e3 * (c.rebound - ref.rebound));
  };
  for (const Part7DropRow& r : drops) {
    std::string ref = Fmt("%.4g N, %.2f mm, %.2f mm", r.ref.peak_force, 1e3 * r.ref.lowest,
                          1e3 * r.ref.rebound);
    ref = r.h_ref ? Fmt("%g s, ", r.h_ref) + ref : "**not converged**, finest: " + ref;
    md << Fmt("| %g | %g | %g ms | %s | %s | %s | %s |\n", r.kp, r.kv, 1e3 * r.h, ref.c_str(),
              cell(r.stock, r.ref).c_str(), cell(r.flag, r.ref).c_str(),
              cell(r.weighted, r.ref).c_str());
  }
}

void WriteMotion(std::ostream& md, const std::vector<MotionResult>& rows) {
  md << "\n## Violent motion\n\n";
  md << "Every servo tuned from its reflected inertia at qpos0 to one f_n (10, 30, 100, 300, "
        "1000 Hz) and zeta (0, 0.3, 0.7, 1); commands across each joint's range (a hinge "
        "without one: ±1.5 rad): a new random target every 40 ms, one step, sinusoids of period "
        "0.5 s; 2 s. Bounded: finite, no bad-state warning, every |qvel| ≤ 1e4. The reference is "
        "stock at h/10, halved until h·2π·f_n ≤ 0.2, bounded if it is at half that step too. "
        "Each cell: runs bounded of the 20 settings (f_n × zeta); flag where bounded: the flag "
        "bounded where the reference is; substepped: the flag's steps taken as substeps, of all "
        "its steps, and the forward passes they added per such step (mean); RMS: the median over "
        "settings where both are bounded of the hinges' qpos error against the reference "
        "(rad).\n\n";
  md << "| model | command | h | reference | stock | flag | weighted | flag where bounded | "
        "substepped | passes added | RMS stock | RMS flag |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  std::vector<std::string> failures;
  auto same = [](const MotionSetting& a, const MotionSetting& b) {
    return a.subject == b.subject && a.contact == b.contact && a.command == b.command &&
           a.h == b.h;
  };
  std::vector<bool> written(rows.size());
  long steps = 0, substepped = 0, substeps = 0;
  std::vector<double> both_stock, both_flag;  // where the flag substepped and stock is bounded
  for (size_t i = 0; i < rows.size(); ++i) {
    if (written[i]) continue;
    const MotionSetting& s = rows[i].setting;
    int ref = 0, stock = 0, flag = 0, weighted = 0, held = 0;
    long group_steps = 0, group_substepped = 0, group_substeps = 0;
    std::vector<double> rms_stock, rms_flag;
    for (size_t j = i; j < rows.size(); ++j) {
      if (!same(rows[j].setting, s)) continue;
      written[j] = true;
      const MotionResult& r = rows[j];
      ref += r.reference_bounded;
      stock += r.stock.bounded;
      flag += r.flag.bounded;
      weighted += r.weighted.bounded;
      group_steps += r.flag.steps;
      group_substepped += r.flag.substepped;
      group_substeps += r.flag.substeps;
      if (!r.reference_bounded) continue;
      held += r.flag.bounded;
      if (!r.flag.bounded) {
        failures.push_back(Fmt("%s%s, %s, f_n %g Hz, zeta %g, h %g ms: diverged at %.3f s "
                               "(the reference's largest hinge speed %.3g rad/s)",
                               r.setting.subject.c_str(), r.setting.contact ? "" : " (contact off)",
                               CommandName(r.setting.command), r.setting.fn, r.setting.zeta,
                               1e3 * r.setting.h, r.flag.t_div, r.reference.peak_speed));
      }
      if (r.stock.bounded) rms_stock.push_back(MotionError(r.stock, r.reference));
      if (r.flag.bounded) rms_flag.push_back(MotionError(r.flag, r.reference));
      if (r.stock.bounded && r.flag.bounded && r.flag.substepped) {
        both_stock.push_back(MotionError(r.stock, r.reference));
        both_flag.push_back(MotionError(r.flag, r.reference));
      }
    }
    steps += group_steps;
    substepped += group_substepped;
    substeps += group_substeps;
    md << Fmt("| %s%s | %s | %g ms | %d | %d | %d | %d | %s%d of %d%s | %.1f %% | %.1f | %.3g | "
              "%.3g |\n",
              s.subject.c_str(), s.contact ? "" : " (contact off)", CommandName(s.command),
              1e3 * s.h, ref, stock, flag, weighted, held < ref ? "**" : "", held, ref,
              held < ref ? "**" : "", group_steps ? 100.0 * group_substepped / group_steps : 0.0,
              group_substepped ? static_cast<double>(group_substeps) / group_substepped : 0.0,
              Median(rms_stock), Median(rms_flag));
  }
  md << Fmt("\nThe flag took %.1f %% of its steps as substeps (%ld of %ld), adding %.1f forward "
            "passes per such step. Where it did and stock is bounded too (%zu settings), the "
            "median qpos error against the reference: stock %.3g rad, the flag %.3g rad.\n",
            steps ? 100.0 * substepped / steps : 0.0, substepped, steps,
            substepped ? static_cast<double>(substeps) / substepped : 0.0, both_stock.size(),
            Median(both_stock), Median(both_flag));
  md << "\nThe flag diverged where the reference is bounded: " << failures.size() << "\n";
  for (const std::string& f : failures) md << "- " << f << "\n";
}

void WriteMotionHeldOut(std::ostream& md, const std::vector<HeldOutRow>& rows) {
  md << "\n### Held out\n\n";
  md << "Grids outside part 8 (benchmark/mjpos_bench.h, MotionHeldOut): A held out the first "
        "form of the flag's substeps, and its four divergences then chose their third level; "
        "B and C were run after those choices, and with part 8 and the real robots then chose "
        "the threshold of a steady turn; D was run after every choice. The flag alone, the "
        "reference only where the flag diverged.\n\n";
  md << "| grid | settings | flag bounded | flag diverged, reference bounded | substepped | "
        "passes added |\n|---|---|---|---|---|---|\n";
  std::vector<std::string> failures;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i && rows[i].grid == rows[i - 1].grid) continue;
    int n = 0, flag = 0, lost = 0;
    long steps = 0, substepped = 0, substeps = 0;
    for (size_t j = i; j < rows.size() && rows[j].grid == rows[i].grid; ++j) {
      const HeldOutRow& r = rows[j];
      if (!r.loaded) continue;
      n++;
      flag += r.flag.bounded;
      steps += r.flag.steps;
      substepped += r.flag.substepped;
      substeps += r.flag.substeps;
      if (!r.flag.bounded && r.reference_bounded) {
        lost++;
        failures.push_back(Fmt("%s: %s: diverged at %.3f s", r.grid.c_str(),
                               MotionSettingName(r.setting).c_str(), r.flag.t_div));
      }
    }
    md << Fmt("| %s | %d | %d | %s%d%s | %.1f %% | %.1f |\n", rows[i].grid.c_str(), n, flag,
              lost ? "**" : "", lost, lost ? "**" : "", steps ? 100.0 * substepped / steps : 0.0,
              substepped ? static_cast<double>(substeps) / substepped : 0.0);
  }
  for (const std::string& f : failures) md << "- " << f << "\n";
}

void WriteMotionWeighted(std::ostream& md, const std::vector<WeightedMotionResult>& rows) {
  md << "\n### The weighted mode under motion\n\n";
  md << "The suite of support/motion.h (WeightedMotionSettings): stock, the flag and the weighted "
        "mode at h; where stock is bounded, each error against the reference, judged where "
        "halving the reference's step moves it by at most a tenth of stock's error (a chaotic "
        "run is not).\n\n";
  md << "| subject | settings | stock | flag | weighted | weighted diverged, flag bounded | "
        "judged | weighted within 1.05x stock | worst weighted / stock |\n"
        "|---|---|---|---|---|---|---|---|---|\n";
  std::vector<std::string> failures;
  for (size_t i = 0; i < rows.size(); ++i) {
    const MotionSetting& first = rows[i].setting;
    if (i && rows[i - 1].setting.subject == first.subject &&
        rows[i - 1].setting.contact == first.contact) {
      continue;
    }
    int n = 0, stock = 0, flag = 0, weighted = 0, lost = 0, judged = 0, within = 0;
    double worst = 0;
    for (size_t j = i; j < rows.size() && rows[j].setting.subject == first.subject &&
                       rows[j].setting.contact == first.contact;
         ++j) {
      const WeightedMotionResult& r = rows[j];
      if (!r.loaded) continue;
      n++;
      stock += r.stock.bounded;
      flag += r.flag.bounded;
      weighted += r.weighted.bounded;
      if (r.flag.bounded && !r.weighted.bounded) {
        lost++;
        failures.push_back(MotionSettingName(r.setting) +
                           Fmt(": the weighted mode diverged at %.3f s", r.weighted.t_div));
      }
      if (r.judged) {
        judged++;
        double ratio = r.weighted_error / r.stock_error;
        within += WithinStock(r.weighted_error, r.stock_error);
        worst = std::max(worst, ratio);
      }
    }
    md << Fmt("| %s%s | %d | %d | %d | %d | %s%d%s | %d | %d | %.3g |\n", first.subject.c_str(),
              first.contact ? "" : " (contact off)", n, stock, flag, weighted, lost ? "**" : "",
              lost, lost ? "**" : "", judged, within, worst);
  }
  for (const std::string& f : failures) md << "- " << f << "\n";
}

}  // namespace mjpos::bench
