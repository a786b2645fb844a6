package dev.iomap.testkit.fsx;

import java.util.ArrayList;
import java.util.List;

/** The description of differing bytes: where, expected and actual, and the ops that touched them. */
record Mismatch(String what, long offset, byte[] expected, byte[] actual) {
    private static final int ROWS = 16;
    private static final int RECENT = 8;

    String describe(List<Op> ops, List<long[]> touched) {
        StringBuilder out = new StringBuilder(what).append(": ");
        if (expected.length != actual.length) {
            out.append("expected ").append(expected.length).append(" bytes, got ").append(actual.length).append("; ");
        }
        int n = Math.min(expected.length, actual.length);
        int first = -1;
        int bad = 0;
        for (int i = 0; i < n; i++) {
            if (expected[i] != actual[i]) {
                first = first < 0 ? i : first;
                bad++;
            }
        }
        if (first < 0) {
            return out.append("the common bytes agree").toString();
        }
        long badOffset = offset + first;
        out.append(bad).append(" bytes differ, first at ").append(badOffset)
                .append(String.format(" (0x%x)%n", badOffset));
        out.append("    offset        expected actual\n");
        for (int i = first; i < Math.min(n, first + ROWS); i++) {
            out.append(String.format("    0x%-10x  %02x       %02x%s%n", offset + i, expected[i] & 0xff,
                    actual[i] & 0xff, expected[i] == actual[i] ? "" : "  <"));
        }
        out.append("last ops touching 0x").append(Long.toHexString(badOffset)).append(":\n");
        int shown = 0;
        for (int i = ops.size() - 1; i >= 0 && shown < RECENT; i--) {
            long[] range = touched.get(i);
            if (range[0] <= badOffset && badOffset < range[1]) {
                out.append("    #").append(i).append(' ').append(ops.get(i).toLine()).append('\n');
                shown++;
            }
        }
        if (shown == 0) {
            out.append("    none (the byte was never written: expected a hole)\n");
        }
        return out.toString();
    }

    /** The last few ops, whatever they touched (cache drops, syncs and remounts matter too). */
    static String recent(List<Op> ops) {
        List<String> lines = new ArrayList<>();
        for (int i = Math.max(0, ops.size() - RECENT); i < ops.size(); i++) {
            lines.add("    #" + i + " " + ops.get(i).toLine());
        }
        return "last ops:\n" + String.join("\n", lines) + "\n";
    }
}
