package klap.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Generates a large, valid CDP program for speed measurements: {@code n} independent units, each
 * a child kernel, a {@code __device__} helper reading the built-in indices, and a parent with an
 * early return, a divergent launch, a launch in a uniform loop and a device {@code cudaMalloc}
 * (33 lines per unit), then a {@code main} launching every parent. It compiles with
 * {@code nvcc -rdc=true}, so the tool's time can be compared with nvcc's on the same file.
 */
public final class LargeInput {
    private LargeInput() {
    }

    /** @return the program text with {@code units} units */
    public static String program(int units) {
        StringBuilder sb = new StringBuilder("#include <cstdio>\n#define BLOCK 128\n\n");
        for (int i = 0; i < units; i++) {
            sb.append("""
                    __device__ int gid%1$d() {
                      return blockIdx.x * blockDim.x + threadIdx.x;
                    }

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
                      float scale = 0.5f * (float)(%1$d + 1);
                      if (count > 0) {
                        child%1$d<<<(count + BLOCK - 1) / BLOCK, BLOCK>>>(out, in, v * 1024, count, scale);
                      }
                      for (int r = 0; r < rounds; r++) {
                        if ((v + r) %% 3 == 0) {
                          child%1$d<<<1, 32, 0, cudaStreamFireAndForget>>>(out, in, v * 1024 + r, 1, scale);
                        }
                      }
                      float* scratch;
                      if (cudaMalloc(&scratch, (count + 1) * sizeof(float)) == cudaSuccess) {
                        scratch[0] = scale;
                        out[v] += scratch[0];
                        cudaFree(scratch);
                      }
                    }

                    """.formatted(i));
        }
        sb.append("int main() {\n  float* out = nullptr; const float* in = nullptr; const int* counts = nullptr;\n");
        for (int i = 0; i < units; i++) {
            sb.append("  parent").append(i).append("<<<4, BLOCK>>>(out, in, counts, 512, 2);\n");
        }
        sb.append("  cudaDeviceSynchronize();\n  return 0;\n}\n");
        return sb.toString();
    }

    /** Writes a program of about {@code lines} lines: {@code LargeInput OUT.cu [lines]}. */
    public static void main(String[] args) throws IOException {
        int lines = args.length > 1 ? Integer.parseInt(args[1]) : 2000;
        Files.writeString(Path.of(args[0]), program(Math.max(1, lines / 33)));
    }
}
