package dev.iomap.cli.jobfile;

import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;

/** fio's {@code rw=} patterns that {@code iomap bench} runs. */
public enum ReadWrite {
    READ("read", true, false, false),
    WRITE("write", false, true, false),
    RANDREAD("randread", true, false, true),
    RANDWRITE("randwrite", false, true, true),
    RW("rw", true, true, false),
    RANDRW("randrw", true, true, true);

    private final String fioName;
    private final boolean reads;
    private final boolean writes;
    private final boolean random;

    ReadWrite(String fioName, boolean reads, boolean writes, boolean random) {
        this.fioName = fioName;
        this.reads = reads;
        this.writes = writes;
        this.random = random;
    }

    /**
     * @param value a value of fio's {@code rw=} ({@code readwrite} is fio's other name for {@code rw})
     * @return the pattern, if supported
     */
    public static Optional<ReadWrite> byFioName(String value) {
        String name = value.strip().toLowerCase(Locale.ROOT);
        String canonical = name.equals("readwrite") ? "rw" : name;
        return Arrays.stream(values()).filter(rw -> rw.fioName.equals(canonical)).findFirst();
    }

    /** @return the name fio uses */
    public String fioName() {
        return fioName;
    }

    /** @return whether the pattern reads */
    public boolean reads() {
        return reads;
    }

    /** @return whether the pattern writes */
    public boolean writes() {
        return writes;
    }

    /** @return whether offsets are random (each block once per pass, as fio's random map) */
    public boolean random() {
        return random;
    }

    /** @return whether reads and writes are mixed ({@code rwmixread} applies) */
    public boolean mixed() {
        return reads && writes;
    }
}
