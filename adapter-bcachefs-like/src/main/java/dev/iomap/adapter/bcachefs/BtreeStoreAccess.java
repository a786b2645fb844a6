package dev.iomap.adapter.bcachefs;

import dev.iomap.adapter.bcachefs.store.KeyStore;
import dev.iomap.device.BlockDevice;
import java.util.List;

/** TEMPORARY until the store branch is merged. */
final class BtreeStoreAccess implements StoreAccess {
    @Override
    public KeyStore format(BlockDevice device, Config config) {
        throw new UnsupportedOperationException("store not merged yet");
    }

    @Override
    public KeyStore open(BlockDevice device, boolean readOnly) {
        throw new UnsupportedOperationException("store not merged yet");
    }

    @Override
    public int probe(BlockDevice device) {
        throw new UnsupportedOperationException("store not merged yet");
    }

    @Override
    public List<String> check(BlockDevice device) {
        throw new UnsupportedOperationException("store not merged yet");
    }
}
