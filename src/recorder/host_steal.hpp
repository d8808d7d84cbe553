// The time the hypervisor took this machine's CPUs away while the program was recorded
// ("steal" in /proc/stat). A virtual machine's host may pause its virtual CPUs: a paused CPU's
// thread sees the time pass as if it had run, so every strand that held such a pause looks
// longer, and nothing the guest's kernel reports about the thread (switches, faults) shows it.
// The recording can only say how much there was: per CPU, at the kernel's resolution (10 ms),
// from the start of the trace to its end, over the CPUs the program may run on. Read twice, off
// the program's path.
#pragma once

#include "trace/format.hpp"

namespace tasklens::recorder {

// Reads the CPUs' times now, as the start of the recording.
void host_steal_start();
// The steal since host_steal_start() (false when it was never read, or /proc/stat cannot be).
bool host_steal_end(trace::HostSteal& out);

}  // namespace tasklens::recorder
