package klap.fuzz;

/**
 * A large valid CDP file of about {@code lines} lines: repeated units of a child, a helper and a
 * parent with an early return, a divergent launch and a launch in a uniform loop (the shape of
 * bench's {@code klap.bench.LargeInput}, which the fuzz module does not depend on).
 */
final class Large {
    private Large() {
    }

    static String program(int lines) {
        int units = Math.max(1, lines / 22);
        StringBuilder sb = new StringBuilder("#define BLOCK 128\n");
        for (int i = 0; i < units; i++) {
            sb.append("""
                    __device__ int gid%1$d() { return blockIdx.x * blockDim.x + threadIdx.x; }

                    __global__ void child%1$d(float* out, const float* in, int offset, int count, float scale) {
                      int e = gid%1$d();
                      if (e < count) {
                        out[offset + e] = in[offset + e] * scale + (float)gridDim.x;
                      }
                    }

                    __global__ void parent%1$d(float* out, const float* in, const int* counts, int n, int rounds) {
                      int v = blockIdx.x * blockDim.x + threadIdx.x;
                      if (v >= n) return;
                      int count = counts[v];
                      if (count > 0) {
                        child%1$d<<<(count + BLOCK - 1) / BLOCK, BLOCK>>>(out, in, v * 1024, count, 0.5f);
                      }
                      for (int r = 0; r < rounds; r++) {
                        if ((v + r) %% 3 == 0) child%1$d<<<1, 32, 0, cudaStreamFireAndForget>>>(out, in, v + r, 1, 1.0f);
                      }
                    }

                    """.formatted(i));
        }
        return sb.toString();
    }
}
