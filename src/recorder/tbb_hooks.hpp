// oneTBB support of the recorder (tbb_hooks.cpp): interposed oneTBB entry points and the
// functions the wrappers of include/tasklens/tbb.h call.
#pragma once

namespace tasklens::recorder {

// Called before main() when the program links TBB, before the trace's head is written: checks
// the linked runtime's ABI (`old_abi`: the program links TBB 2017-2020's libtbb.so.2, whose
// entry points are not oneTBB's), finds the real entry points, and records the runtime's name
// and whether its tasks are traced in g_runtime_version / g_runtime_flags.
void tbb_prepare(bool old_abi);

}  // namespace tasklens::recorder
