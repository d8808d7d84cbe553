// The typed errors of tasklens's tools (the commands and what they call: loading a recording,
// the platform, the launch of a program); main() turns each into one line on stderr and an exit
// code. (The trace reader's and the model's own errors are in trace/reader.hpp and
// model/builder.hpp.)
#pragma once

#include <stdexcept>
#include <string>

namespace tasklens {

// Bad command-line usage or an input the user must fix (exit code 2).
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The environment cannot do what was asked (missing runtime, metric not available): exit 3.
class EnvironmentError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The machine has not the memory a reader needs for this trace: exit 6 (as std::bad_alloc).
class OutOfMemoryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace tasklens
