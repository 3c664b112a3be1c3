/**
 * Random CDP programs and robustness tests (issue 6), and the program shapes that the first GPU run
 * found klap miscompiling (issue 10): see {@link klap.fuzz.Shape}, {@link klap.fuzz.ProgramGenerator}
 * and, for a GPU run, {@link klap.fuzz.Main}; chain programs for launch promotion (issue 12, {@link
 * klap.fuzz.ChainGenerator}) and programs for the CUDA-NP transform (issue 13, {@link klap.fuzz.NpGenerator}).
 */
package klap.fuzz;
