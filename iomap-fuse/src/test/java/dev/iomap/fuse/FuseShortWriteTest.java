package dev.iomap.fuse;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.api.NoSpaceException;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * Issue 35 item 4: a write that runs out of space after some of its bytes were written is a short write,
 * as in the kernel ({@code iomap_file_buffered_write} returns the bytes written when any were): the
 * program learns how many bytes landed, and the write of the rest gets ENOSPC; the write that
 * landed bytes never reports ENOSPC for all of them.
 */
class FuseShortWriteTest {
    private static final int BS = 4096;

    @Test
    void aWriteThatRunsOutOfSpacePartWayReturnsTheBytesItWroteAndTheRestGetsEnospc() throws IOException {
        RamBlockDevice device = new RamBlockDevice(BS, 4L << 20);
        IomapFileSystems.format("bcachefs-like", device, FormatOptions.blockSize(BS));
        try (IomapFileSystem fs = IomapFileSystems.mount("bcachefs-like", device, MountOptions.defaults())) {
            try (IomapFile fill = fs.create("/fill")) {
                try {
                    while (true) {
                        fill.write(fill.size(), ByteBuffer.wrap(new byte[16 * BS]));
                    }
                } catch (NoSpaceException full) {
                    // Every data block is reserved by the fill's dirty data: now give four back.
                    fill.truncate((fill.size() / BS - 4) * BS);
                }
            }
            FuseBridge bridge = new FuseBridge(fs, FuseBridgeTest.USER, FuseBridgeTest.DEFAULT);
            try {
                long fh = bridge.create(FuseBridgeTest.ROOT, "f", 0644, FuseBridgeTest.O_RDWR, FuseBridgeTest.USER)
                        .opened().fh();
                byte[] bytes = new byte[16 * BS];
                Arrays.fill(bytes, (byte) 7);
                ByteBuffer src = ByteBuffer.wrap(bytes);
                assertThat(bridge.write(fh, 0, src, false)).as("the short write's count").isEqualTo(4 * BS);
                assertThat(fs.stat("/f").size()).isEqualTo(4 * BS);
                ByteBuffer rest = ByteBuffer.wrap(bytes, 4 * BS, 12 * BS).slice();
                assertThat(FuseBridgeTest.errno(() -> bridge.write(fh, 4 * BS, rest, false)))
                        .isEqualTo(-LinuxErrno.ENOSPC);
                assertThat(fs.stat("/f").size()).isEqualTo(4 * BS);
            } finally {
                bridge.releaseAll();
            }
        }
    }
}
