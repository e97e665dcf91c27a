// Tensor-core issue rate of the warp-level MMAs the prefill kernel uses on
// the H200: mma.sync m16n8k16 bf16 (dense) against
// mma.sp::ordered_metadata m16n8k32 bf16 (2:4 sparse A, twice the K).
// Register-only loops with 8 independent accumulators per warp, so only
// the tensor pipe limits them. Build: nvcc -arch=sm_90 -O2 -o mma_sp_rate
// mma_sp_rate.cu; prints dense-equivalent TFLOP/s per form.
// Measured 2026-12-04 on the H200: mma.sync 635-646 TFLOP/s, mma.sp
// 932-947 (ratio 1.47: a 2:4 product takes 68% of a dense one's tensor
// time on this path, not 50%).
#include <cstdio>
#include <cuda_runtime.h>

template <bool Sparse>
__global__ void loop(float *out, int iters, unsigned seed) {
  unsigned a0 = seed, a1 = seed ^ 1, a2 = seed ^ 2, a3 = seed ^ 3;
  unsigned b0 = seed ^ 4, b1 = seed ^ 5, b2 = seed ^ 6, b3 = seed ^ 7;
  unsigned meta = 0x44444444u;  // positions (0, 1) in every group
  float c[8][4] = {};
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      if (Sparse)
        asm volatile(
            "mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.bf16.bf16.f32 "
            "{%0,%1,%2,%3},{%4,%5,%6,%7},{%8,%9,%10,%11},{%0,%1,%2,%3},%12,0x0;\n"
            : "+f"(c[j][0]), "+f"(c[j][1]), "+f"(c[j][2]), "+f"(c[j][3])
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "r"(b2),
              "r"(b3), "r"(meta));
      else
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
            "{%0,%1,%2,%3},{%4,%5,%6,%7},{%8,%9},{%0,%1,%2,%3};\n"
            : "+f"(c[j][0]), "+f"(c[j][1]), "+f"(c[j][2]), "+f"(c[j][3])
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
  }
  float s = 0;
  for (int j = 0; j < 8; ++j)
    s += c[j][0] + c[j][1] + c[j][2] + c[j][3];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

template <bool Sparse> double run(float *out, int blocks, int threads) {
  const int iters = 4096;
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  loop<Sparse><<<blocks, threads>>>(out, 16, 1);  // warm up
  cudaEventRecord(start);
  loop<Sparse><<<blocks, threads>>>(out, iters, 1);
  cudaEventRecord(stop);
  cudaEventSynchronize(stop);
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  double warps = double(blocks) * threads / 32;
  // Dense-equivalent flops: m16n8k16 = 4096, m16n8k32 (sparse) = 8192.
  double flops = warps * iters * 8 * (Sparse ? 8192.0 : 4096.0);
  return flops / (ms * 1e-3) / 1e12;
}

int main() {
  float *out;
  cudaMalloc(&out, 132 * 8 * 1024 * sizeof(float));
  for (int threads : {256, 512, 1024}) {
    double dense = run<false>(out, 132 * 2, threads);
    double sparse = run<true>(out, 132 * 2, threads);
    printf("threads/CTA %4d: mma.sync m16n8k16 %.0f TFLOP/s, mma.sp m16n8k32 "
           "%.0f TFLOP/s (dense-equivalent), ratio %.2f\n",
           threads, dense, sparse, sparse / dense);
  }
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) {
    printf("cuda error %s\n", cudaGetErrorString(err));
    return 1;
  }
  return 0;
}
