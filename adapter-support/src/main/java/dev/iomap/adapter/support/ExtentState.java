package dev.iomap.adapter.support;

import dev.iomap.spi.IomapType;

/** What the blocks of an {@link Extent} hold. Stored in the low two bits of an extent's flags. */
public enum ExtentState {
    /** Allocated blocks holding file data. */
    WRITTEN(0, IomapType.MAPPED),
    /** Allocated (preallocated) blocks not yet written: read as zeroes until converted. */
    UNWRITTEN(1, IomapType.UNWRITTEN),
    /** Space reserved but no blocks allocated yet (delayed allocation): no device block. */
    DELALLOC(2, IomapType.DELALLOC);

    private final int code;
    private final IomapType iomapType;

    ExtentState(int code, IomapType iomapType) {
        this.code = code;
        this.iomapType = iomapType;
    }

    /** @return whether extents in this state have device blocks ({@link #DELALLOC} has none) */
    public boolean hasDeviceBlocks() {
        return this != DELALLOC;
    }

    /** @return the {@link IomapType} an adapter reports for it */
    public IomapType iomapType() {
        return iomapType;
    }

    /** @return its on-device code */
    int code() {
        return code;
    }

    /** @return the state with that on-device code, or null if there is none */
    static ExtentState ofCode(int code) {
        for (ExtentState state : values()) {
            if (state.code == code) {
                return state;
            }
        }
        return null;
    }
}
