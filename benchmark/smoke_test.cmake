# The CI smoke test of mjpos_bench (benchmark/CMakeLists.txt): runs the driver with --smoke and
# checks what a user sees: progress lines and the tables on the terminal, none of Google
# Benchmark's lines (one per run), which are in the raw log that the tables name. No timing or
# count is checked.
#
#   cmake -DBENCH=bin/mjpos_bench -DOUT=FILE.md -DRAW_LOG=FILE.log -P smoke_test.cmake

file(REMOVE "${OUT}" "${RAW_LOG}")
execute_process(
  COMMAND "${BENCH}" --smoke --benchmark_min_time=0.001 "--out=${OUT}" "--raw_log=${RAW_LOG}"
  OUTPUT_VARIABLE terminal ERROR_VARIABLE terminal RESULT_VARIABLE rc)
message("${terminal}")  # ctest --output-on-failure / -V shows the run
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "mjpos_bench --smoke exited with ${rc}")
endif()

# the models of part 1 as the terminal names them; Google Benchmark's names have '_' for ' '
set(shown_names humanoid "servo humanoid" humanoid100 22_humanoids arm7 chain10 chain30 chain100
                chain300)
list(LENGTH shown_names n)
file(READ "${RAW_LOG}" raw)
file(READ "${OUT}" md)
set(i 0)
foreach(shown IN LISTS shown_names)
  math(EXPR i "${i} + 1")
  string(REPLACE " " "_" name "${shown}")
  # a progress line per model
  string(FIND "${terminal}" "mjpos_bench: timing ${shown} (${i}/${n})" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "no progress line for ${shown} (${i}/${n}) on the terminal")
  endif()
  foreach(flag off on)
    # Google Benchmark's line of the run: in the log, not on the terminal
    string(REGEX MATCH "\n${name}/${flag}/rep0 +[0-9.]+ us" line "${raw}")
    if(NOT line)
      message(FATAL_ERROR "no line of ${name}/${flag}/rep0 in ${RAW_LOG}")
    endif()
    string(FIND "${terminal}" "${name}/${flag}/rep0" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "Google Benchmark's line of ${name}/${flag}/rep0 on the terminal")
    endif()
  endforeach()
endforeach()

# the tables, on the terminal and in the markdown, name the log
foreach(where terminal md)
  string(FIND "${${where}}" "raw Google Benchmark output (one line per run): `${RAW_LOG}`" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the tables (${where}) do not name ${RAW_LOG}")
  endif()
  string(FIND "${${where}}" "## Cost of the flag (ms per step)" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "no table of part 1 (${where})")
  endif()
  # part 7: a row with its converged reference
  string(REGEX MATCH "\n\\| quadruped standing \\| 100000 \\| 0 \\| 5 ms \\| [0-9.e-]+ s, " row
         "${${where}}")
  if(NOT row)
    message(FATAL_ERROR "no row of part 7 with a converged reference (${where})")
  endif()
  # part 7's drop: a row with its converged reference
  string(REGEX MATCH "\n\\| 100000 \\| 1000 \\| 5 ms \\| [0-9.e-]+ s, " row "${${where}}")
  if(NOT row)
    message(FATAL_ERROR "no row of part 7's drop with a converged reference (${where})")
  endif()
  # part 8: the humanoid's row with its reference bounded
  string(REGEX MATCH "\n\\| humanoid \\| random \\| 10 ms \\| 1 \\| " row "${${where}}")
  if(NOT row)
    message(FATAL_ERROR "no row of part 8 with a bounded reference (${where})")
  endif()
  # part 8's held-out grids: the row of grid A, its one setting run
  string(REGEX MATCH "\n\\| A \\| 1 \\| [01] \\| " row "${${where}}")
  if(NOT row)
    message(FATAL_ERROR "no row of part 8's held-out grids (${where})")
  endif()
endforeach()
