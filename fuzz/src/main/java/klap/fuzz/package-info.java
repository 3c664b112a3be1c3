/** Random CDP programs and robustness tests (issue 6). */
package klap.fuzz;
