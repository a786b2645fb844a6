package dev.iomap.nio;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.IomapException;
import java.nio.file.FileSystems;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The NIO contract on the bcachefs-like adapter, which takes no mount option. */
class BcachefsLikeFilesTest extends IomapFilesContract {
    @Override
    String adapter() {
        return "bcachefs-like";
    }

    @Test
    void aMountOptionIsRefusedWithItsName() throws Exception {
        fs.close();
        assertThatThrownBy(() -> FileSystems.newFileSystem(uri(image), Map.of("adapterOptions", "nocow=true")))
                .isInstanceOf(IomapException.class)
                .hasMessage("bcachefs-like: unknown mount option 'nocow' (it takes none)");
        fs = FileSystems.newFileSystem(uri(image), Map.of());
    }
}
