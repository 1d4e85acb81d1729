/* dt_demangle.h — readable kernel names for the tables of results.md: Itanium C++ ABI
 * names (CUPTI's kernel records, e.g. "_ZN2at6native29vectorized_elementwise_kernel...")
 * demangled by libstdc++'s __cxa_demangle, and a deterministic shortening of long
 * template names so a table cell stays about one line.
 *
 * Purpose. results.json keeps the name the worker recorded (mangled); only the formatter
 * shows the readable form. Demangling is the library's (never by hand): a name that does
 * not start with "_Z" (our "dt_add_f32") or that the library refuses passes through
 * unchanged.
 *
 * The shortening rule (dt_demangle_shorten), applied to a demangled name:
 *  1. the parameter list (the last top-level "(...)" with its trailing cv/ref qualifiers)
 *     and the return type (text before the last top-level space) are dropped: what stays
 *     is the function's qualified name with its template arguments;
 *  2. inside template arguments: namespace/class qualifiers are dropped
 *     ("at::native::CUDAFunctor_add<float>" -> "CUDAFunctor_add<float>"), template
 *     argument lists nested deeper than two levels become "<…>", a non-empty "(...)"
 *     becomes "(…)" (also in the qualified name), and "> >" closes as ">>";
 *  3. if the result is longer than max_chars characters ("…" counts as one), trailing
 *     arguments of the last outermost template list are replaced, one at a time, by
 *     ", …" (the first argument is always kept); then that whole list by "<…>"; then the
 *     text is cut to max_chars - 1 characters plus "…".
 * Example: "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add
 * <float>, std::array<char*, 3ul> >(int, ...)" -> "at::native::vectorized_elementwise_
 * kernel<4, CUDAFunctor_add<float>, …>" (max_chars 80).
 *
 * Ownership: every returned string is malloc'd and owned by the caller (free()); NULL
 * only for a NULL input (allocation failure aborts, as dt_xmalloc). Thread-safety:
 * reentrant (__cxa_demangle is). Never includes jansson.h or cuda.h. */
#ifndef DT_DEMANGLE_H
#define DT_DEMANGLE_H

#include <stddef.h>

/* The table width of a shortened kernel name, in characters. */
#define DT_DEMANGLE_SHORT_CHARS 80

/* The full demangled form of name, or a copy of name when it is not a mangled C++ name
 * or the demangler fails; *demangled (may be NULL) says which (1 demangled, 0 not). */
char *dt_demangle(const char *name, int *demangled);

/* The shortening rule above on an already demangled name; max_chars >= 8. */
char *dt_demangle_shorten(const char *demangled, size_t max_chars);

/* The table form: dt_demangle_shorten(dt_demangle(name)) when name demangles, else a
 * copy of name unchanged (names that are not mangled are shown as recorded). */
char *dt_demangle_short(const char *name, size_t max_chars);

#endif
