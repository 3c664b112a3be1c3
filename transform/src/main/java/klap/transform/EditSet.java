package klap.transform;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Text edits on one original source text: replacements of a range and insertions at an offset.
 * Edits are values; rendering applies them to a slice of the original text.
 *
 * <p>Two kinds: <em>coarse</em> edits (statement rewrites) must never partially overlap another
 * edit, which would be a compiler bug and raises {@link IllegalStateException}; <em>fine</em>
 * edits (identifier renames, argument insertions) may lie strictly inside a coarse replacement,
 * whose text was then built from {@link #render} of that range and already contains them, so they
 * are dropped there. Insertions at one offset keep the order in which they were added and come
 * before a replacement starting at that offset.
 */
public final class EditSet {
    private record Edit(int start, int end, String text, boolean fine, int seq) {
        boolean insertion() {
            return start == end;
        }
    }

    private final String original;
    private final List<Edit> edits = new ArrayList<>();

    /** @param original the text all offsets refer to */
    public EditSet(String original) {
        this.original = original;
    }

    /** Replaces {@code [start, end)} with {@code text} (coarse). */
    public EditSet replace(int start, int end, String text) {
        return add(start, end, text, false);
    }

    /** Inserts {@code text} at {@code offset} (coarse). */
    public EditSet insert(int offset, String text) {
        return add(offset, offset, text, false);
    }

    /** Replaces {@code [start, end)} with {@code text} (fine: may lie inside a coarse replacement). */
    public EditSet replaceFine(int start, int end, String text) {
        return add(start, end, text, true);
    }

    /** Inserts {@code text} at {@code offset} (fine). */
    public EditSet insertFine(int offset, String text) {
        return add(offset, offset, text, true);
    }

    private EditSet add(int start, int end, String text, boolean fine) {
        if (start < 0 || end < start || end > original.length()) {
            throw new IllegalArgumentException("edit out of range: " + start + ".." + end);
        }
        edits.add(new Edit(start, end, text, fine, edits.size()));
        return this;
    }

    /** @return a new set holding this set's fine edits only (to render argument slices) */
    public EditSet fineOnly() {
        EditSet s = new EditSet(original);
        for (Edit e : edits) {
            if (e.fine) {
                s.edits.add(new Edit(e.start, e.end, e.text, true, s.edits.size()));
            }
        }
        return s;
    }

    /** Adds every edit of {@code other} (same original text) to this set. */
    public EditSet addAll(EditSet other) {
        if (other.original != original && !other.original.equals(original)) {
            throw new IllegalArgumentException("edit sets of different texts");
        }
        for (Edit e : other.edits) {
            edits.add(new Edit(e.start, e.end, e.text, e.fine, edits.size()));
        }
        return this;
    }

    /**
     * Renders {@code [from, to)} of the original with every edit inside that range applied.
     *
     * @throws IllegalStateException if two coarse edits overlap, or an edit straddles the range
     */
    public String render(int from, int to) {
        List<Edit> in = new ArrayList<>();
        for (Edit e : edits) {
            boolean inside = e.start >= from && e.end <= to;
            if (inside) {
                in.add(e);
            } else if (e.start < to && e.end > from) {
                throw new IllegalStateException("klap internal error: edit " + e.start + ".." + e.end
                        + " straddles the rendered range " + from + ".." + to);
            }
        }
        in.sort(Comparator.<Edit>comparingInt(Edit::start)
                .thenComparing(e -> e.insertion() ? 0 : 1)
                .thenComparingInt(Edit::seq));
        // drop fine edits absorbed by a coarse replacement that contains them
        List<Edit> kept = new ArrayList<>();
        for (Edit e : in) {
            boolean absorbed = false;
            if (e.fine) {
                for (Edit c : in) {
                    if (!c.fine && !c.insertion() && c.start <= e.start && e.end <= c.end
                            && (c.start < e.start || e.end < c.end || !e.insertion())) {
                        absorbed = true;
                        break;
                    }
                }
            }
            if (!absorbed) {
                kept.add(e);
            }
        }
        StringBuilder out = new StringBuilder(to - from + 256);
        int pos = from;
        Edit last = null;
        for (Edit e : kept) {
            if (e.start < pos) {
                throw new IllegalStateException("klap internal error: overlapping edits at " + e.start
                        + " (" + describe(last) + " and " + describe(e) + ")");
            }
            out.append(original, pos, e.start).append(e.text);
            pos = e.end;
            last = e;
        }
        out.append(original, pos, to);
        return out.toString();
    }

    private String describe(Edit e) {
        return e == null ? "?" : e.start + ".." + e.end + " '" + e.text.replace("\n", " ").substring(0, Math.min(30, e.text.length())) + "'";
    }

    /** @return the whole text with every edit applied */
    public String render() {
        return render(0, original.length());
    }

    /** @return true if no edit was added */
    public boolean isEmpty() {
        return edits.isEmpty();
    }
}
