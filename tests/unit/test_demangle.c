/* test_demangle.c — readable kernel names (src/format/dt_demangle): CUPTI's mangled
 * names from the H200 (torch's elementwise kernels) demangled by libstdc++ and shortened
 * for results.md's tables by the documented rule; names that are not mangled or that
 * the demangler refuses pass through unchanged. Run: ctest -R test_demangle. */
#include "../dt_check.h"

#include "format/dt_demangle.h"

#include <stdlib.h>
#include <string.h>

static const char *TORCH_ADD =
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEESt5arrayIPcLm3EEEEviT0_T1_";
static const char *TORCH_COPY =
    "_ZN2at6native18elementwise_kernelILi128ELi2EZNS0_22gpu_kernel_impl_nocastIZZZNS0_23direct_"
    "copy_kernel_cudaERNS_18TensorIteratorBaseEENKUlvE1_clEvENKUlvE8_clEvEUlfE_EEvS4_RKT_EUliE_"
    "EEviT1_";

/* dt_demangle(in) is want with demangled flag ok; the caller's line on failure. */
static void full_is(int line, const char *in, const char *want, int ok) {
    int got_ok = -1;
    char *got = dt_demangle(in, &got_ok);
    CHECK_AT(line, got && strcmp(got, want) == 0, "dt_demangle(%s) = [%s], want [%s]", in,
             got ? got : "(null)", want);
    CHECK_AT(line, got_ok == ok, "dt_demangle(%s) flag %d, want %d", in, got_ok, ok);
    free(got);
}

static void short_is(int line, const char *in, size_t max, const char *want) {
    char *got = dt_demangle_short(in, max);
    CHECK_AT(line, got && strcmp(got, want) == 0, "dt_demangle_short(%s, %zu) = [%s], want [%s]",
             in, max, got ? got : "(null)", want);
    free(got);
}

static void shorten_is(int line, const char *in, size_t max, const char *want) {
    char *got = dt_demangle_shorten(in, max);
    CHECK_AT(line, got && strcmp(got, want) == 0, "dt_demangle_shorten(%s, %zu) = [%s], want [%s]",
             in, max, got ? got : "(null)", want);
    free(got);
}

static void test_full(void) {
    full_is(__LINE__, TORCH_ADD,
            "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
            "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, "
            "3ul>)", 1);
    full_is(__LINE__, "_Z10add_kernelIfEvPfi", "void add_kernel<float>(float*, int)", 1);
    full_is(__LINE__, "_Z3fooi", "foo(int)", 1);
    /* not mangled: unchanged */
    full_is(__LINE__, "dt_add_f32", "dt_add_f32", 0);
    full_is(__LINE__, "", "", 0);
    /* starts like a mangled name but is not one: the original kept */
    full_is(__LINE__, "_Zfoo", "_Zfoo", 0);
    full_is(__LINE__, "_ZN2at6native", "_ZN2at6native", 0);
    CHECK(dt_demangle(NULL, NULL) == NULL);
}

static void test_short(void) {
    /* the brief's example: qualifiers dropped inside the arguments, then the last
     * argument replaced by "…" to fit 80 characters */
    short_is(__LINE__, TORCH_ADD, 80,
             "at::native::vectorized_elementwise_kernel<4, CUDAFunctor_add<float>, …>");
    /* wide enough: all arguments, "> >" closed as ">>" */
    short_is(__LINE__, TORCH_ADD, 120,
             "at::native::vectorized_elementwise_kernel<4, CUDAFunctor_add<float>, array<char*, 3ul>>");
    /* a lambda-heavy torch name: nested lists beyond two levels and "(...)" collapse */
    short_is(__LINE__, TORCH_COPY, 80,
             "at::native::elementwise_kernel<128, 2, {lambda(int)#1}>");
    /* narrow: arguments dropped down to the first, then the whole list, then a cut */
    short_is(__LINE__, TORCH_ADD, 50, "at::native::vectorized_elementwise_kernel<4, …>");
    short_is(__LINE__, TORCH_ADD, 44, "at::native::vectorized_elementwise_kernel<…>");
    short_is(__LINE__, TORCH_ADD, 20, "at::native::vectori…");
    short_is(__LINE__, "_Z10add_kernelIfEvPfi", 80, "add_kernel<float>");
    short_is(__LINE__, "_Z3fooi", 80, "foo");
    /* not mangled or refused: unchanged, however long */
    short_is(__LINE__, "dt_add_f32", 80, "dt_add_f32");
    short_is(__LINE__, "_Zfoo", 80, "_Zfoo");
    short_is(__LINE__, "void add_kernel<float>(float*, int|x)", 10,
             "void add_kernel<float>(float*, int|x)");

    /* the rule on demangled text */
    shorten_is(__LINE__, "void ns::k<ns::A<ns::B<int> >, 3>(int)", 80, "ns::k<A<B<…>>, 3>");
    shorten_is(__LINE__, "void (anonymous namespace)::k<(anonymous namespace)::F>(int) const",
               80, "(…)::k<F>");
    shorten_is(__LINE__, "ns::Outer<int>::operator()(float) const", 80, "ns::Outer<int>::operator()");
    shorten_is(__LINE__, "bool operator< <int>(int, int)", 80, "operator< <int>");
    /* a very long name: result within the bound, deterministic */
    char longname[2048] = "void ";
    for (int i = 0; i < 40; i++)
        strcat(longname, "long_namespace_part::");
    strcat(longname, "kernel<int, float>(int)");
    char *a = dt_demangle_shorten(longname, 80), *b = dt_demangle_shorten(longname, 80);
    CHECK(a && b && strcmp(a, b) == 0);
    size_t chars = 0;
    for (const char *p = a; p && *p; p++)
        chars += ((unsigned char)*p & 0xC0) != 0x80;
    CHECK(chars == 80, "long name shortened to %zu characters", chars);
    CHECK(a && strncmp(a, "long_namespace_part::long_namespace_part::", 42) == 0 &&
          strcmp(a + strlen(a) - 3, "…") == 0, "[%s]", a ? a : "");
    free(a);
    free(b);
}

int main(void) {
    test_full();
    test_short();
    return dt_check_summary("test_demangle");
}
