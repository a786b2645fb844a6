/**
 * Cluster glocks and membership on ZooKeeper, through Apache Curator: {@link dev.iomap.cluster.ZkLockManager}
 * (the {@link dev.iomap.spi.lock.LockManager} of one node, caching glocks until another node asks),
 * {@link dev.iomap.cluster.ClusterMembership} (journal slots, the self-{@link dev.iomap.cluster.Fence}),
 * {@link dev.iomap.cluster.ClusterRecovery} (replaying a dead node's journal before its glocks go), and
 * {@link dev.iomap.cluster.EmbeddedZooKeeper} for one machine.
 */
package dev.iomap.cluster;
