package klap.bridge;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import org.eclipse.cdt.core.index.IIndexFileLocation;
import org.eclipse.cdt.core.parser.FileContent;
import org.eclipse.cdt.internal.core.parser.IMacroDictionary;
import org.eclipse.cdt.internal.core.parser.scanner.InternalFileContent;
import org.eclipse.cdt.internal.core.parser.scanner.InternalFileContentProvider;

/**
 * Gives CDT the content of included files: the CUDA prelude (from memory) and project headers
 * read from disk, each run through the offset-preserving {@link Prepass}. CDT only asks for paths
 * found on the quote-include search path (the including file's directory, then the include
 * directories); angle includes are given no search path and so stay unresolved (no content).
 * The text of every header read is kept so that diagnostics inside headers get line and column.
 */
final class HeaderProvider extends InternalFileContentProvider {

    /** Original texts of the headers read, by the path CDT used for them. */
    final Map<String, String> headerTexts = new HashMap<>();
    /** Pre-pass results of the headers read, by path. */
    final Map<String, Prepass> headerPrepasses = new HashMap<>();

    @Override
    public boolean getInclusionExists(String path) {
        return CudaPrelude.PATH.equals(path) || headerTexts.containsKey(path) || Files.isRegularFile(Path.of(path));
    }

    @Override
    public InternalFileContent getContentForInclusion(String path, IMacroDictionary macroDictionary) {
        if (CudaPrelude.PATH.equals(path)) {
            return (InternalFileContent) FileContent.create(path, PRELUDE);
        }
        try {
            String text = headerTexts.get(path);
            if (text == null) {
                byte[] bytes = Files.readAllBytes(Path.of(path));
                try {
                    text = StandardCharsets.UTF_8.newDecoder().decode(java.nio.ByteBuffer.wrap(bytes)).toString();
                } catch (java.nio.charset.CharacterCodingException e) {
                    text = new String(bytes, StandardCharsets.ISO_8859_1);
                }
                headerTexts.put(path, text);
                headerPrepasses.put(path, Prepass.run(text));
            }
            return (InternalFileContent) FileContent.create(path, headerPrepasses.get(path).out.clone());
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    @Override
    public InternalFileContent getContentForInclusion(IIndexFileLocation ifl, String astPath) {
        return null;
    }

    private static final char[] PRELUDE = CudaPrelude.text().toCharArray();
}
