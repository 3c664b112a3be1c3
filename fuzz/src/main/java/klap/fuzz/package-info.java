/**
 * Random CDP programs and robustness tests (issue 6), and the program shapes that the first GPU run
 * found klap miscompiling (issue 10): see {@link klap.fuzz.Shape}, {@link klap.fuzz.ProgramGenerator}
 * and, for a GPU run, {@link klap.fuzz.Main}.
 */
package klap.fuzz;
