// klap::launch_result(before): a generated launch lambda reads the launch's OWN error, not a stale
// error that the user's code left pending before it (device-side "last error" is per thread):
//  1. no pending error, launch succeeds               -> cudaSuccess, nothing pending after;
//  2. no pending error, launch fails (block of 4096)  -> that error (X), and it is cleared;
//  3. the user left X pending, launch succeeds        -> cudaSuccess, X still pending (the user's
//                                                        own cudaGetLastError still sees it);
//  4. the user left X pending, launch fails with Y (1 MiB of dynamic shared memory; second kernel,
//     since a launch that is not refused at launch time would fail the context)
//                                                     -> Y and cleared if Y != X; cudaSuccess if Y == X
//                                                        (the documented ambiguity).
// Children of the successful launches must run (2 of them).
#include "klap/klap.cuh"
#include "klap_test.cuh"

__global__ void ok_child(unsigned* ran) { atomicAdd(ran, 1u); }

__global__ void probe(int* out, unsigned* ran) {
  cudaError_t pre = cudaPeekAtLastError();
  ok_child<<<1, 1>>>(ran);
  out[0] = klap::launch_result(pre);  // 1
  out[1] = cudaPeekAtLastError();
  pre = cudaPeekAtLastError();
  ok_child<<<1, 4096>>>(ran);
  out[2] = klap::launch_result(pre);  // 2: X
  out[3] = cudaPeekAtLastError();
  ok_child<<<1, 4096>>>(ran);         // the user's own failing launch, error left pending
  out[4] = cudaPeekAtLastError();
  pre = cudaPeekAtLastError();
  ok_child<<<1, 1>>>(ran);
  out[5] = klap::launch_result(pre);  // 3
  out[6] = cudaPeekAtLastError();
  out[7] = cudaGetLastError();        // the user's check sees its own error
  out[8] = cudaPeekAtLastError();
}

__global__ void probe_smem(int* out, unsigned* ran) {
  const cudaError_t none = cudaPeekAtLastError();
  ok_child<<<1, 1, 1u << 20>>>(ran);
  out[0] = klap::launch_result(none);  // Y with nothing pending
  ok_child<<<1, 4096>>>(ran);
  const cudaError_t pre = cudaPeekAtLastError();  // X pending
  out[1] = pre;
  ok_child<<<1, 1, 1u << 20>>>(ran);
  out[2] = klap::launch_result(pre);  // 4
  out[3] = cudaPeekAtLastError();
  (void)cudaGetLastError();
}

int main() {
  kt_watchdog("test_launch_result", 50);
  int* d_out;
  unsigned* ran;
  KT_CUDA(cudaMalloc(&d_out, 16 * sizeof(int)));
  KT_CUDA(cudaMalloc(&ran, sizeof(unsigned)));
  KT_CUDA(cudaMemset(d_out, 0xFF, 16 * sizeof(int)));
  KT_CUDA(cudaMemset(ran, 0, sizeof(unsigned)));
  probe<<<1, 1>>>(d_out, ran);
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
  int o[16];
  unsigned r = 0;
  KT_CUDA(cudaMemcpy(o, d_out, sizeof(o), cudaMemcpyDeviceToHost));
  KT_CUDA(cudaMemcpy(&r, ran, sizeof(r), cudaMemcpyDeviceToHost));
  const int X = o[2];
  std::printf("test_launch_result: a device launch with a 4096-thread block gives %d (%s)\n", X,
              cudaGetErrorString(cudaError_t(X)));
  KT_EXPECT(o[0] == cudaSuccess && o[1] == cudaSuccess, "1: result %d, pending after %d", o[0], o[1]);
  KT_EXPECT(X != cudaSuccess && o[3] == cudaSuccess, "2: result %d (want an error), pending after %d (want 0)", X, o[3]);
  KT_EXPECT(o[4] == X, "the user's failing launch left %d pending, want %d", o[4], X);
  KT_EXPECT(o[5] == cudaSuccess && o[6] == X && o[7] == X && o[8] == cudaSuccess,
            "3: result %d (want 0), pending after %d (want %d), user's cudaGetLastError %d, then %d", o[5], o[6], X,
            o[7], o[8]);
  KT_EXPECT(r == 2, "%u children ran, want 2", r);

  KT_CUDA(cudaMemset(d_out, 0xFF, 16 * sizeof(int)));
  probe_smem<<<1, 1>>>(d_out, ran);
  KT_CUDA(cudaGetLastError());
  const cudaError_t e = cudaDeviceSynchronize();
  KT_EXPECT(e == cudaSuccess, "a launch with 1 MiB of dynamic shared memory was not refused at launch time: the "
            "parent ended with %s", cudaGetErrorString(e));
  if (e == cudaSuccess) {
    KT_CUDA(cudaMemcpy(o, d_out, sizeof(o), cudaMemcpyDeviceToHost));
    const int Y = o[0];
    std::printf("test_launch_result: a device launch with 1 MiB of dynamic shared memory gives %d (%s)\n", Y,
                cudaGetErrorString(cudaError_t(Y)));
    KT_EXPECT(Y != cudaSuccess, "the 1 MiB launch succeeded");
    KT_EXPECT(o[1] == X, "stale error %d, want %d", o[1], X);
    if (Y != X)
      KT_EXPECT(o[2] == Y && o[3] == cudaSuccess, "4: result %d (want %d), pending after %d (want 0)", o[2], Y, o[3]);
    else
      KT_EXPECT(o[2] == cudaSuccess, "4 (Y == X): result %d, want 0 (documented ambiguity)", o[2]);
  }
  return kt_finish("test_launch_result");
}
