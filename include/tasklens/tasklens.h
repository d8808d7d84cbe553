/* tasklens/tasklens.h: user region annotations for tasklens, from C and C++.
 *
 *   #include <tasklens/tasklens.h>
 *
 *   TASKLENS_REGION_BEGIN("solve");      C and C++: marks where region "solve" starts ...
 *   ...
 *   TASKLENS_REGION_END("solve");        ... and where it ends, on the same thread.
 *
 *   { TASKLENS_REGION("solve"); ... }    C++ (11 or later): the region lasts until the end of
 *   tasklens::Region r("solve");         the scope; the same, with a guard of your own name
 *
 * `tasklens record` stores where the regions of each thread begin and end, so that the analyses
 * can answer questions like "what if this region were k times faster". Regions may nest, and
 * may be used inside OpenMP tasks; a region should begin and end in the same task (and thread).
 * The name is normally a string literal: the recorder caches it by address. Any NUL-terminated
 * string works (names are compared by content), and two calls with equal text name the same
 * region.
 *
 * Nothing to link, nearly nothing to pay. The header only declares the two functions below, as
 * weak symbols; nothing in the program defines them. The recorder, which `tasklens record`
 * preloads into the program, does, and the dynamic loader binds the program's references to it
 * at load time. Without the recorder the references stay null and each macro is a load and a
 * branch not taken (about 1 ns for a BEGIN/END pair, measured). In a recorded run a region
 * boundary is one event, like an OpenMP one (about 10 ns: a TSC read and a few bytes); calls from
 * threads that OpenMP does not know, and calls in a forked child, record nothing.
 *
 * Build requirement (measured with gcc 12 and clang 14, binutils 2.40): the code that uses the
 * macros must be compiled as position-independent code: -fPIE (the default of gcc and clang on
 * Debian, Ubuntu, Fedora...), or -fPIC in a shared library. Such code reads the functions'
 * addresses from the GOT, which the loader fills in, whether the executable is linked as a PIE
 * (the default) or with -no-pie. Code compiled with -fno-pie / -fno-pic gets the null address
 * fixed at link time, and -rdynamic does not change that: the regions are silently not
 * recorded. Statically linked programs (-static, -static-pie) cannot be recorded at all.
 *
 * Define TASKLENS_DISABLE before including this header to compile the annotations out: the
 * macros then generate no code at all (and do not evaluate their argument).
 */
#ifndef TASKLENS_TASKLENS_H
#define TASKLENS_TASKLENS_H

#if !defined(TASKLENS_DISABLE) && !defined(__GNUC__)
/* Weak references need GCC or clang (or a compiler that mimics them): compile the regions out
 * elsewhere. */
#define TASKLENS_DISABLE
#endif

#ifndef TASKLENS_DISABLE

#ifdef __cplusplus
#define TASKLENS_NOEXCEPT noexcept
extern "C" {
#else
#define TASKLENS_NOEXCEPT
#endif

/* Defined by the tasklens recorder (libtasklens_recorder.so); null when it is not loaded. */
void tasklens_region_begin(const char* name) TASKLENS_NOEXCEPT __attribute__((weak));
void tasklens_region_end(const char* name) TASKLENS_NOEXCEPT __attribute__((weak));

#ifdef __cplusplus
}
#endif

#define TASKLENS_REGION_BEGIN(name)                         \
  do {                                                      \
    if (tasklens_region_begin) tasklens_region_begin(name); \
  } while (0)
#define TASKLENS_REGION_END(name)                       \
  do {                                                  \
    if (tasklens_region_end) tasklens_region_end(name); \
  } while (0)

#else /* TASKLENS_DISABLE */

/* A no-op expression rather than an empty expansion, so that `if (x) TASKLENS_REGION_END(n);`
 * draws no empty-body warning. */
#define TASKLENS_REGION_BEGIN(name) ((void)0)
#define TASKLENS_REGION_END(name) ((void)0)

#endif /* TASKLENS_DISABLE */

#ifdef __cplusplus

namespace tasklens {

/* A region from its construction to the end of its scope. */
class Region {
 public:
#ifndef TASKLENS_DISABLE
  explicit Region(const char* name) noexcept : name_(name) { TASKLENS_REGION_BEGIN(name); }
  ~Region() { TASKLENS_REGION_END(name_); }
#else
  explicit Region(const char*) noexcept {}
#endif
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;

#ifndef TASKLENS_DISABLE
 private:
  const char* name_;
#endif
};

} /* namespace tasklens */

#ifndef TASKLENS_DISABLE
/* A guard variable with a name of its own (__COUNTER__), so that a scope can hold several. */
#define TASKLENS_REGION(name) \
  ::tasklens::Region TASKLENS_REGION_CONCAT_(tasklens_region_guard_, __COUNTER__)(name)
#define TASKLENS_REGION_CONCAT_(a, b) TASKLENS_REGION_CONCAT2_(a, b)
#define TASKLENS_REGION_CONCAT2_(a, b) a##b
#else
#define TASKLENS_REGION(name) ((void)0)
#endif

#endif /* __cplusplus */

#endif /* TASKLENS_TASKLENS_H */
