// Waking the machine's CPUs before the program starts (main_with_recording, recording.cpp).
#pragma once

namespace tasklens::recorder {

// Keeps every CPU the process may run on busy for `ms` milliseconds, then returns. A CPU that
// sat idle (a virtual CPU its host descheduled, a physical one asleep at a low clock) runs the
// first milliseconds after it wakes several times slower, and a program's start-up strands
// (main() before its first construct, a new worker's first strand) run exactly then: one-offs
// on the critical path, each of which no other strand of its code can show to be slow. Spinning
// first makes them run at the speed of the rest of the run. Threads of the recorder's own,
// which record nothing. Returns how many CPUs it kept busy (this thread's and its helpers'; 0 for
// no time asked).
unsigned warm_up_cpus(unsigned ms);

}  // namespace tasklens::recorder
