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

// Prints "struct.field offset" for every field of mjModel, mjData, mjOption, mjContact, mjVisual
// and mjStatistic that the headers it is compiled against declare through mjxmacro.h or lists
// here, and "sizeof struct size". Compiled against stock 2.2.2's headers and against the patched
// ones, the two outputs must agree on every stock line (compat_check.sh): a program built against
// the stock headers then reads every stock field where the patched library writes it.

#include <stddef.h>
#include <stdio.h>

#include <mujoco/mujoco.h>
#include <mujoco/mjxmacro.h>

#define OFF(s, f) printf("%s.%s %zu\n", #s, #f, offsetof(s, f))

int main(void) {
  // mjModel: sizes, options, visual, statistic, arrays
#define X(name) OFF(mjModel, name);
  MJMODEL_INTS
#undef X
  OFF(mjModel, opt);
  OFF(mjModel, vis);
  OFF(mjModel, stat);
  OFF(mjModel, buffer);
#define X(type, name, nr, nc) OFF(mjModel, name);
  MJMODEL_POINTERS
#undef X
  OFF(mjModel, names);
  OFF(mjModel, text_data);

  // mjOption
#define X(type, name) OFF(mjOption, name);
  MJOPTION_SCALARS
#undef X
#define X(name, n) OFF(mjOption, name);
  MJOPTION_VECTORS
#undef X

  // mjData: scalars, diagnostics, arrays
#define X(type, name) OFF(mjData, name);
  MJDATA_SCALAR
#undef X
#define X(type, name, nr, nc) OFF(mjData, name);
  MJDATA_VECTOR
  MJDATA_POINTERS
#undef X
  OFF(mjData, buffer);
  OFF(mjData, stack);

  // mjContact
  OFF(mjContact, dist);
  OFF(mjContact, pos);
  OFF(mjContact, frame);
  OFF(mjContact, includemargin);
  OFF(mjContact, friction);
  OFF(mjContact, solref);
  OFF(mjContact, solimp);
  OFF(mjContact, mu);
  OFF(mjContact, H);
  OFF(mjContact, dim);
  OFF(mjContact, geom1);
  OFF(mjContact, geom2);
  OFF(mjContact, exclude);
  OFF(mjContact, efc_address);

  // mjVisual, by section and a field of each
  OFF(mjVisual, global);
  OFF(mjVisual, global.offheight);
  OFF(mjVisual, quality);
  OFF(mjVisual, quality.numquads);
  OFF(mjVisual, headlight);
  OFF(mjVisual, headlight.active);
  OFF(mjVisual, map);
  OFF(mjVisual, map.actuatortendon);
  OFF(mjVisual, scale);
  OFF(mjVisual, scale.slidercrank);
  OFF(mjVisual, rgba);
  OFF(mjVisual, rgba.crankbroken);

  // mjStatistic
  OFF(mjStatistic, meaninertia);
  OFF(mjStatistic, meanmass);
  OFF(mjStatistic, meansize);
  OFF(mjStatistic, extent);
  OFF(mjStatistic, center);

  printf("sizeof mjModel %zu\nsizeof mjData %zu\nsizeof mjOption %zu\nsizeof mjContact %zu\n"
         "sizeof mjVisual %zu\nsizeof mjStatistic %zu\n", sizeof(mjModel), sizeof(mjData),
         sizeof(mjOption), sizeof(mjContact), sizeof(mjVisual), sizeof(mjStatistic));
  return 0;
}
