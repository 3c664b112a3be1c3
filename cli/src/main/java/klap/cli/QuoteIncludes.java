package klap.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Keeps the quote-includes of klap's output resolvable when {@code -o} writes it into another
 * directory than the input's. A compiler looks for {@code #include "x.h"} first in the directory
 * of the file being compiled (C++ [cpp.include]; nvcc and gcc: the including file's directory),
 * so {@code klap in/prog.cu -o out/prog.cu} followed by {@code nvcc out/prog.cu} no longer found
 * {@code in/x.h} (found in NVIDIA's cdpAdvancedQuicksort sample, 2026-11-29). klap-nvcc does not need
 * this: it adds the input's directory to nvcc's quote path ({@code -iquote}).
 *
 * <p>Input: the output text, the input file and the output file. Output: the same text with each
 * directive {@code #include "NAME"} rewritten to {@code #include "REL"} where NAME is relative,
 * does not exist relative to the output's directory and does relative to the input's; REL is that
 * file's path relative to the output's directory ({@code /}-separated), so that the two trees
 * can still move together. Directives inside comments and string literals are left alone, as is
 * every include that resolves the same from both directories or through {@code -I} only.
 */
final class QuoteIncludes {
    private static final Pattern DIRECTIVE = Pattern.compile("(?m)^[ \\t]*#[ \\t]*include[ \\t]*\"([^\"\\n]+)\"");

    private QuoteIncludes() {
    }

    /**
     * @param text   klap's output
     * @param input  the input file (its directory is where the original's quote-includes resolved)
     * @param output the output file
     * @return {@code text}, its quote-includes rebased where needed (the same string if none is)
     */
    static String rebase(String text, Path input, Path output) {
        Path inDir = input.toAbsolutePath().normalize().getParent();
        Path outDir = output.toAbsolutePath().normalize().getParent();
        if (inDir == null || outDir == null || inDir.equals(outDir)) {
            return text;
        }
        String blank = klap.transform.Lexical.blankCommentsAndLiterals(text);
        Matcher m = DIRECTIVE.matcher(text);
        StringBuilder sb = new StringBuilder();
        int last = 0;
        while (m.find()) {
            int hash = text.indexOf('#', m.start());
            String name = m.group(1);
            Path target;
            try {
                if (blank.charAt(hash) != '#' || Path.of(name).isAbsolute() || Files.exists(outDir.resolve(name))) {
                    continue; // in a comment or a literal, absolute, or found next to the output
                }
                target = inDir.resolve(name).normalize();
            } catch (java.nio.file.InvalidPathException e) {
                continue; // not a path this file system can name: left as written
            }
            if (!Files.isRegularFile(target)) {
                continue; // found through -I (or nowhere): the same from both directories
            }
            String rel = outDir.relativize(target).toString().replace('\\', '/');
            sb.append(text, last, m.start(1)).append(rel);
            last = m.end(1);
        }
        return last == 0 ? text : sb.append(text, last, text.length()).toString();
    }
}
