package dev.iomap.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.devices.nbd.LocalNbdServer;
import dev.iomap.testkit.AdapterContractSuite;
import dev.iomap.testkit.AdapterFixture;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The whole kit with an nbd-server under it: a subclass gives the fixture, with {@link #layer()} as its
 * device layer. The server runs for the class (started before the first test, stopped after the last,
 * also when they fail); a test of its own proves the layer carries the adapter's traffic.
 */
abstract class NbdKitSuite extends AdapterContractSuite {
    @TempDir
    static Path exports;

    private static NbdMirrorLayer layer;

    @BeforeAll
    static void startNbdServer() throws IOException {
        assumeTrue(LocalNbdServer.Kind.NBD_SERVER.installed(), "nbd-server is not installed");
        layer = NbdMirrorLayer.start(exports);
    }

    @AfterAll
    static void stopNbdServer() {
        if (layer != null) {
            layer.close();
            layer = null;
        }
    }

    /** @return the layer on the class's nbd-server */
    static NbdMirrorLayer layer() {
        return layer;
    }

    @Test
    void writesGoThroughTheExportAndReadsOfThemAreCheckedAgainstIt() throws IOException {
        AdapterFixture kit = fixture();
        long writes = layer.mirroredWrites();
        long reads = layer.checkedReads();
        byte[] data = new byte[3 * 4096 + 100];
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) (i * 7 + 1);
        }
        try (var device = kit.newFormattedDevice(); IomapFileSystem fs = kit.mount(device)) {
            try (IomapFile file = fs.create("/f")) {
                file.write(0, ByteBuffer.wrap(data));
                file.fsync();
                fs.dropCleanCache();
                ByteBuffer back = ByteBuffer.allocate(data.length);
                file.read(0, back);
                assertThat(back.array()).isEqualTo(data);
            }
        }
        assertThat(layer.mirroredWrites()).isGreaterThan(writes);
        assertThat(layer.checkedReads()).isGreaterThan(reads);
    }
}
