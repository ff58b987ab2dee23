// Metal's types and functions, declared for clang in C++ mode: what bench/mlx/metal_syntax.py
// compiles an MLX Metal kernel against, where Apple's Metal compiler is not at hand.  Written
// from the Metal Shading Language specification for the names MLX custom kernels use (and
// MLX's own bfloat16_t); declarations only, for -fsyntax-only.
//
// Strict where Apple's compiler is (which is clang underneath):
//  - vectors are clang's ext_vector_type, as in Metal: swizzles, splats and the rule that a
//    non-const reference cannot bind to a vector element (`thread float &x = v[i];`);
//  - device, constant and threadgroup are distinct address spaces: a device pointer does not
//    convert to a thread or threadgroup one, nor back;
//  - every function takes the types Metal gives it overloads for (scalars and vectors of
//    half and float; integers where Metal has them), so a call Metal cannot resolve fails.
// Lenient where it cannot be exact: vector constructors (`float2(a, b)`, rewritten by the
// checker to ks_metal_make<float2>(a, b)) take any arguments, [[attributes]] are not
// checked, and nothing about resources (threadgroup memory size, registers) is.
#ifndef KS_METAL_SYNTAX_H
#define KS_METAL_SYNTAX_H

#define device __attribute__((address_space(1)))
#define constant __attribute__((address_space(2)))
#define threadgroup __attribute__((address_space(3)))
#define thread

typedef __SIZE_TYPE__ size_t;
typedef __PTRDIFF_TYPE__ ptrdiff_t;
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long uint64_t;
typedef _Float16 half;
typedef __bf16 bfloat;
typedef bfloat bfloat16_t; // MLX's name (mlx/backend/metal/kernels/bf16.h)
typedef half float16_t;

#define INFINITY __builtin_inff()
#define NAN __builtin_nanf("")
#define MAXFLOAT 0x1.fffffep127f
#define FLT_MAX 0x1.fffffep127f
#define FLT_MIN 0x1p-126f
#define FLT_EPSILON 0x1p-23f
#define HALF_MAX ((half)65504.0f)
#define M_E_F 2.71828182845904523536f
#define M_LOG2E_F 1.44269504088896340736f
#define M_LOG10E_F 0.434294481903251827651f
#define M_LN2_F 0.693147180559945309417f
#define M_LN10_F 2.30258509299404568402f
#define M_PI_F 3.14159265358979323846f
#define M_PI_2_F 1.57079632679489661923f
#define M_1_PI_F 0.318309886183790671538f
#define M_SQRT2_F 1.41421356237309504880f
#define M_SQRT1_2_F 0.707106781186547524401f

namespace metal {

template <typename T, int N> using vec = T __attribute__((ext_vector_type(N)));

#define KS_METAL_VECTORS(T)                                                                     \
	typedef T T##2 __attribute__((ext_vector_type(2)));                                     \
	typedef T T##3 __attribute__((ext_vector_type(3)));                                     \
	typedef T T##4 __attribute__((ext_vector_type(4)));
KS_METAL_VECTORS(bool)
KS_METAL_VECTORS(char)
KS_METAL_VECTORS(uchar)
KS_METAL_VECTORS(short)
KS_METAL_VECTORS(ushort)
KS_METAL_VECTORS(int)
KS_METAL_VECTORS(uint)
KS_METAL_VECTORS(long)
KS_METAL_VECTORS(ulong)
KS_METAL_VECTORS(half)
KS_METAL_VECTORS(float)
KS_METAL_VECTORS(bfloat)
#undef KS_METAL_VECTORS

// a vector constructor, float4(a.xy, b, c): its arguments are not checked
template <typename V, typename... A> V ks_metal_make(A...);

// ---- math: half and float, scalars and vectors --------------------------------------
#define KS_METAL_UNARY_T(name, T)                                                                \
	T name(T);                                                                              \
	T##2 name(T##2);                                                                        \
	T##3 name(T##3);                                                                        \
	T##4 name(T##4);
#define KS_METAL_BINARY_T(name, T)                                                               \
	T name(T, T);                                                                           \
	T##2 name(T##2, T##2);                                                                  \
	T##3 name(T##3, T##3);                                                                  \
	T##4 name(T##4, T##4);
#define KS_METAL_TERNARY_T(name, T)                                                              \
	T name(T, T, T);                                                                        \
	T##2 name(T##2, T##2, T##2);                                                            \
	T##3 name(T##3, T##3, T##3);                                                            \
	T##4 name(T##4, T##4, T##4);
#define KS_METAL_UNARY(name) KS_METAL_UNARY_T(name, half) KS_METAL_UNARY_T(name, float)
#define KS_METAL_BINARY(name) KS_METAL_BINARY_T(name, half) KS_METAL_BINARY_T(name, float)
#define KS_METAL_TERNARY(name) KS_METAL_TERNARY_T(name, half) KS_METAL_TERNARY_T(name, float)
#define KS_METAL_MATH                                                                            \
	KS_METAL_UNARY(exp)                                                                     \
	KS_METAL_UNARY(exp2)                                                                    \
	KS_METAL_UNARY(exp10)                                                                   \
	KS_METAL_UNARY(log)                                                                     \
	KS_METAL_UNARY(log2)                                                                    \
	KS_METAL_UNARY(log10)                                                                   \
	KS_METAL_UNARY(sqrt)                                                                    \
	KS_METAL_UNARY(rsqrt)                                                                   \
	KS_METAL_UNARY(sin)                                                                     \
	KS_METAL_UNARY(cos)                                                                     \
	KS_METAL_UNARY(tan)                                                                     \
	KS_METAL_UNARY(tanh)                                                                    \
	KS_METAL_UNARY(sinh)                                                                    \
	KS_METAL_UNARY(cosh)                                                                    \
	KS_METAL_UNARY(atan)                                                                    \
	KS_METAL_UNARY(floor)                                                                   \
	KS_METAL_UNARY(ceil)                                                                    \
	KS_METAL_UNARY(round)                                                                   \
	KS_METAL_UNARY(rint)                                                                    \
	KS_METAL_UNARY(trunc)                                                                   \
	KS_METAL_UNARY(fabs)                                                                    \
	KS_METAL_UNARY(abs)                                                                     \
	KS_METAL_UNARY(saturate)                                                                \
	KS_METAL_BINARY(pow)                                                                    \
	KS_METAL_BINARY(powr)                                                                   \
	KS_METAL_BINARY(fmax)                                                                   \
	KS_METAL_BINARY(fmin)                                                                   \
	KS_METAL_BINARY(max)                                                                    \
	KS_METAL_BINARY(min)                                                                    \
	KS_METAL_BINARY(fmod)                                                                   \
	KS_METAL_BINARY(atan2)                                                                  \
	KS_METAL_BINARY(step)                                                                   \
	KS_METAL_TERNARY(fma)                                                                   \
	KS_METAL_TERNARY(clamp)                                                                 \
	KS_METAL_TERNARY(mix)
KS_METAL_MATH
namespace fast {
KS_METAL_MATH
}
namespace precise {
KS_METAL_MATH
}
#undef KS_METAL_MATH
#undef KS_METAL_UNARY
#undef KS_METAL_BINARY
#undef KS_METAL_TERNARY
#undef KS_METAL_UNARY_T
#undef KS_METAL_BINARY_T
#undef KS_METAL_TERNARY_T

// integers: abs, min, max, clamp and the bit functions
#define KS_METAL_INT(T)                                                                          \
	T abs(T);                                                                               \
	T min(T, T);                                                                            \
	T max(T, T);                                                                            \
	T clamp(T, T, T);                                                                       \
	T popcount(T);                                                                          \
	T clz(T);                                                                               \
	T ctz(T);                                                                               \
	T mulhi(T, T);                                                                          \
	T##2 min(T##2, T##2);                                                                   \
	T##2 max(T##2, T##2);                                                                   \
	T##3 min(T##3, T##3);                                                                   \
	T##3 max(T##3, T##3);                                                                   \
	T##4 min(T##4, T##4);                                                                   \
	T##4 max(T##4, T##4);
KS_METAL_INT(short)
KS_METAL_INT(ushort)
KS_METAL_INT(int)
KS_METAL_INT(uint)
KS_METAL_INT(long)
KS_METAL_INT(ulong)
#undef KS_METAL_INT

bool isnan(half);
bool isnan(float);
bool isinf(half);
bool isinf(float);
bool isfinite(half);
bool isfinite(float);
bool signbit(float);
float copysign(float, float);
template <typename T> T select(T a, T b, bool c);
template <typename T> T dot(T, T);
template <typename T, typename U> T as_type(U);

// ---- SIMD groups and threadgroups ---------------------------------------------------
enum class mem_flags { mem_none = 0, mem_device = 1, mem_threadgroup = 2, mem_texture = 4 };
mem_flags operator|(mem_flags, mem_flags);
void threadgroup_barrier(mem_flags);
void simdgroup_barrier(mem_flags);

template <typename T> T simd_sum(T);
template <typename T> T simd_product(T);
template <typename T> T simd_max(T);
template <typename T> T simd_min(T);
template <typename T> T simd_and(T);
template <typename T> T simd_or(T);
template <typename T> T simd_xor(T);
template <typename T> T simd_prefix_exclusive_sum(T);
template <typename T> T simd_prefix_inclusive_sum(T);
template <typename T> T simd_prefix_exclusive_product(T);
template <typename T> T simd_prefix_inclusive_product(T);
template <typename T> T simd_broadcast(T, ushort lane);
template <typename T> T simd_broadcast_first(T);
template <typename T> T simd_shuffle(T, ushort lane);
template <typename T> T simd_shuffle_up(T, ushort delta);
template <typename T> T simd_shuffle_down(T, ushort delta);
template <typename T> T simd_shuffle_xor(T, ushort mask);
template <typename T> T simd_shuffle_rotate_up(T, ushort delta);
template <typename T> T simd_shuffle_rotate_down(T, ushort delta);
template <typename T> T quad_sum(T);
template <typename T> T quad_shuffle_xor(T, ushort mask);
bool simd_all(bool);
bool simd_any(bool);
bool simd_is_first();

// SIMD-group matrices: a lane's thread_elements() is a reference to a vector of two
template <typename T, int Cols, int Rows> struct simdgroup_matrix {
	simdgroup_matrix();
	explicit simdgroup_matrix(T);
	thread vec<T, 2> &thread_elements();
	const thread vec<T, 2> &thread_elements() const;
};
typedef simdgroup_matrix<half, 8, 8> simdgroup_half8x8;
typedef simdgroup_matrix<float, 8, 8> simdgroup_float8x8;
typedef simdgroup_matrix<bfloat, 8, 8> simdgroup_bfloat8x8;
template <typename T, int Cols, int Rows>
simdgroup_matrix<T, Cols, Rows> make_filled_simdgroup_matrix(T value);
template <typename T, int Cols, int Rows>
void simdgroup_load(thread simdgroup_matrix<T, Cols, Rows> &d, const device T *src,
		    ulong elements_per_row = Cols, ulong2 matrix_origin = 0,
		    bool transpose_matrix = false);
template <typename T, int Cols, int Rows>
void simdgroup_load(thread simdgroup_matrix<T, Cols, Rows> &d, const threadgroup T *src,
		    ulong elements_per_row = Cols, ulong2 matrix_origin = 0,
		    bool transpose_matrix = false);
template <typename T, int Cols, int Rows>
void simdgroup_store(thread simdgroup_matrix<T, Cols, Rows> a, device T *dst,
		     ulong elements_per_row = Cols, ulong2 matrix_origin = 0,
		     bool transpose_matrix = false);
template <typename T, int Cols, int Rows>
void simdgroup_store(thread simdgroup_matrix<T, Cols, Rows> a, threadgroup T *dst,
		     ulong elements_per_row = Cols, ulong2 matrix_origin = 0,
		     bool transpose_matrix = false);
template <typename T, typename U, typename V, typename W, int M, int N, int K>
void simdgroup_multiply_accumulate(thread simdgroup_matrix<T, N, M> &d,
				   const thread simdgroup_matrix<U, K, M> &a,
				   const thread simdgroup_matrix<V, N, K> &b,
				   const thread simdgroup_matrix<W, N, M> &c);
template <typename T, typename U, typename V, int M, int N, int K>
void simdgroup_multiply(thread simdgroup_matrix<T, N, M> &d,
			const thread simdgroup_matrix<U, K, M> &a,
			const thread simdgroup_matrix<V, N, K> &b);

// ---- atomics --------------------------------------------------------------------------
enum memory_order { memory_order_relaxed };
template <typename T> struct atomic {
	T value;
};
typedef atomic<int> atomic_int;
typedef atomic<uint> atomic_uint;
typedef atomic<float> atomic_float;
template <typename T> T atomic_load_explicit(const device atomic<T> *, memory_order);
template <typename T> T atomic_load_explicit(const threadgroup atomic<T> *, memory_order);
template <typename T> void atomic_store_explicit(device atomic<T> *, T, memory_order);
template <typename T> void atomic_store_explicit(threadgroup atomic<T> *, T, memory_order);
template <typename T> T atomic_fetch_add_explicit(device atomic<T> *, T, memory_order);
template <typename T> T atomic_fetch_add_explicit(threadgroup atomic<T> *, T, memory_order);
template <typename T> T atomic_fetch_max_explicit(device atomic<T> *, T, memory_order);
template <typename T> T atomic_fetch_min_explicit(device atomic<T> *, T, memory_order);

} // namespace metal

using namespace metal;

#endif
