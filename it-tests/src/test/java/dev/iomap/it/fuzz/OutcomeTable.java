package dev.iomap.it.fuzz;

import java.util.EnumMap;
import java.util.Map;
import java.util.TreeMap;

/** Counts of outcomes (and of workload ends) per adapter and mutation kind, printed as a table. */
final class OutcomeTable {
    private final Map<String, Map<MutationKind, int[]>> counts = new TreeMap<>();
    private static final int COLUMNS = Outcome.values().length + 2;

    void add(String adapter, MutationKind kind, MutantRun.Verdict verdict) {
        int[] row = counts.computeIfAbsent(adapter, k -> new EnumMap<>(MutationKind.class))
                .computeIfAbsent(kind, k -> new int[COLUMNS]);
        row[verdict.outcome().ordinal()]++;
        switch (verdict.workload()) {
            case COMPLETED -> row[Outcome.values().length]++;
            case STOPPED -> row[Outcome.values().length + 1]++;
            case NOT_RUN -> {
                // Counted by its outcome only.
            }
        }
    }

    /** @return the table, one row per adapter and kind and one total per adapter */
    String render() {
        StringBuilder out = new StringBuilder();
        String format = "%-13s %-18s %9s %9s %9s %10s %10s %10s %10s %9s | %9s %9s%n";
        out.append(String.format(format, "adapter", "mutation", "REFUSED_", "REFUSED_", "SAME_", "DATA_CHANGED",
                "CHANGED_IN", "ROLLED_", "CHECKSUM_", "VIOLATION", "workload", "workload"));
        out.append(String.format(format, "", "", "AT_MOUNT", "BY_FSCK", "DATA", "_IN_FLIPPED", "_FORGED",
                "BACK_LAST", "FAILED_IN", "", "completed", "stopped"));
        out.append(String.format(format, "", "", "", "", "", "_FILE_ONLY", "_FILE_ONLY", "_TRANSACT.",
                "_FLIPPED", "", "", ""));
        int[] all = new int[COLUMNS];
        for (Map.Entry<String, Map<MutationKind, int[]>> adapter : counts.entrySet()) {
            int[] total = new int[COLUMNS];
            for (Map.Entry<MutationKind, int[]> kind : adapter.getValue().entrySet()) {
                out.append(row(format, adapter.getKey(), kind.getKey().name(), kind.getValue()));
                for (int i = 0; i < COLUMNS; i++) {
                    total[i] += kind.getValue()[i];
                    all[i] += kind.getValue()[i];
                }
            }
            out.append(row(format, adapter.getKey(), "(all)", total));
        }
        out.append(row(format, "(all)", "(all)", all));
        return out.toString();
    }

    private static String row(String format, String adapter, String kind, int[] values) {
        Object[] cells = new Object[2 + COLUMNS];
        cells[0] = adapter;
        cells[1] = kind;
        for (int i = 0; i < COLUMNS; i++) {
            cells[2 + i] = values[i];
        }
        return String.format(format, cells);
    }
}
