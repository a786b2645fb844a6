package dev.iomap.spi.trace;

import dev.iomap.spi.lock.LockName;
import jdk.jfr.Category;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.StackTrace;

/**
 * What every glock event records: the node (the kernel's {@code dev}: which mount) and the glock's type
 * and number ({@code gltype}, {@code glnum}). Abstract: each tracepoint is a subclass.
 */
@Category({"iomap4j", "gfs2"})
@Enabled(false)
@StackTrace(false)
public abstract class GlockEvent extends Event {
    /** The node whose holder this is (its lock manager's name). */
    @Label("node")
    String node;

    /** The glock's type: RENAME, INODE, RGRP or IOPEN ({@code gltype}). */
    @Label("gltype")
    String glType;

    /** The glock's number: the inode, the resource group ({@code glnum}). */
    @Label("glnum")
    long glNumber;

    GlockEvent() {
    }

    final void set(String node, LockName name) {
        this.node = node;
        this.glType = name.type().name();
        this.glNumber = name.number();
    }
}
