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

// A program of a MuJoCo 2.2.2 user, built against stock 2.2.2's headers: loads a model (MJCF or
// .mjb), steps it with moving controls, calls mj_inverse, and prints what it reads back through
// the structs as the stock headers lay them out: every size of mjModel, every option, the visual
// and statistic structs, a hash of every mjModel and mjData array (the valid part of the
// constraint and contact arrays), every mjData scalar but the buffer size and the timers, and a
// few values in plain text. Run with the stock library and with the patched one (compat_check.sh),
// the outputs must be identical: then every stock field is where this program looks for it.
//
//   mjpos_abi_probe MODEL [--save-mjb FILE] [--steps N]

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mujoco/mujoco.h>
#include <mujoco/mjxmacro.h>

// FNV-1a over n bytes
static uint64_t hash(const void* data, size_t n) {
  const unsigned char* p = (const unsigned char*)data;
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < n; i++) {
    h = (h ^ p[i]) * 1099511628211ULL;
  }
  return h;
}

static void printHash(const char* what, const void* data, size_t n) {
  printf("%s %016llx\n", what, (unsigned long long)hash(data, n));
}

// rows of an mjData array whose declared size is nr: the valid constraints and contacts only
static long dataRows(const mjModel* m, const mjData* d, const char* nr, long declared) {
  if (!strcmp(nr, "njmax")) return d->nefc;
  if (!strcmp(nr, "nconmax")) return d->ncon;
  return declared;
}

static mjModel* load(const char* path) {
  char error[1000] = "";
  size_t n = strlen(path);
  if (n > 4 && !strcmp(path + n - 4, ".mjb")) {
    return mj_loadModel(path, NULL);
  }
  mjModel* m = mj_loadXML(path, NULL, error, sizeof(error));
  if (!m) printf("load error: %s\n", error);
  return m;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL [--save-mjb FILE] [--steps N]\n", argv[0]);
    return 2;
  }
  const char* save = NULL;
  int steps = 200;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--save-mjb")) save = argv[i + 1];
    if (!strcmp(argv[i], "--steps")) steps = atoi(argv[i + 1]);
  }
  mjModel* m = load(argv[1]);
  if (!m) return 1;
  if (save) mj_saveModel(m, save, NULL, 0);

  // mjModel: sizes, options, visual, statistic, arrays
#define X(name) printf("m.%s %d\n", #name, m->name);
  MJMODEL_INTS
#undef X
#define X(type, name) printf("opt.%s %.17g\n", #name, (double)m->opt.name);
  MJOPTION_SCALARS
#undef X
#define X(name, n) printHash("opt." #name, m->opt.name, sizeof(m->opt.name));
  MJOPTION_VECTORS
#undef X
  printHash("m.vis", &m->vis, sizeof(m->vis));
  printf("m.vis.global.fovy %g\nm.vis.map.znear %g\nm.vis.rgba.crankbroken[3] %g\n",
         m->vis.global.fovy, m->vis.map.znear, m->vis.rgba.crankbroken[3]);
  printf("m.stat %.17g %.17g %.17g %.17g %.17g %.17g %.17g\n", m->stat.meaninertia,
         m->stat.meanmass, m->stat.meansize, m->stat.extent, m->stat.center[0],
         m->stat.center[1], m->stat.center[2]);
  {
    MJMODEL_POINTERS_PREAMBLE(m)
#define X(type, name, nr, nc) \
    printHash("m." #name, m->name, sizeof(type) * (size_t)m->nr * (size_t)(nc));
    MJMODEL_POINTERS
#undef X
  }
  printHash("m.names", m->names, m->nnames);

  // step with moving controls, then the inverse dynamics of the last state
  mjData* d = mj_makeData(m);
  for (int k = 0; k < steps; k++) {
    for (int i = 0; i < m->nu; i++) d->ctrl[i] = 0.3 * sin(0.05 * k + i);
    mj_step(m, d);
  }
  mj_forward(m, d);
  mj_inverse(m, d);

  // mjData: scalars (not the buffer size, which a library may grow), diagnostics, arrays
#define X(type, name) \
  if (strcmp(#name, "nbuffer")) printf("d.%s %.17g\n", #name, (double)d->name);
  MJDATA_SCALAR
#undef X
  printHash("d.warning", d->warning, sizeof(d->warning));
  printHash("d.solver", d->solver, sizeof(d->solver));
  printHash("d.solver_fwdinv", d->solver_fwdinv, sizeof(d->solver_fwdinv));
  printHash("d.energy", d->energy, sizeof(d->energy));
  {
    MJDATA_POINTERS_PREAMBLE(m)
#define X(type, name, nr, nc)                                                      \
    if (strcmp(#name, "contact")) {                                                \
      printHash("d." #name, d->name,                                               \
                sizeof(type) * (size_t)dataRows(m, d, #nr, m->nr) * (size_t)(nc)); \
    }
    MJDATA_POINTERS
#undef X
    (void)nv;
    (void)njmax;
  }

  // contacts field by field: the struct's tail padding is not written by any library
  uint64_t h = 0;
  for (int i = 0; i < d->ncon; i++) {
    const mjContact* c = d->contact + i;
    int ints[5] = {c->dim, c->geom1, c->geom2, c->exclude, c->efc_address};
    h ^= hash(c, offsetof(mjContact, dim)) + 31 * hash(ints, sizeof(ints)) + i;
  }
  printf("d.contact %016llx\n", (unsigned long long)h);

  // a few values in plain text
  if (m->nu) printf("actuator_force[0] %.17g\n", d->actuator_force[0]);
  if (m->nv) {
    printf("qfrc_actuator[nv-1] %.17g\nqfrc_constraint[0] %.17g\nqfrc_smooth[0] %.17g\n",
           d->qfrc_actuator[m->nv - 1], d->qfrc_constraint[0], d->qfrc_smooth[0]);
  }
  if (d->ncon) {
    printf("contact[0] dist %.17g geom %d %d dim %d efc_address %d\n", d->contact[0].dist,
           d->contact[0].geom1, d->contact[0].geom2, d->contact[0].dim,
           d->contact[0].efc_address);
  }

  mj_deleteData(d);
  mj_deleteModel(m);
  return 0;
}
