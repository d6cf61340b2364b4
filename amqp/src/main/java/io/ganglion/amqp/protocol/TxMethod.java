package io.ganglion.amqp.protocol;

/** The methods of class tx ({@link ClassId#TX}). Standard transactions. */
public sealed interface TxMethod extends Method {
    /** {@code tx.select}: puts the channel in transaction mode. */
    record Select() implements TxMethod {
        @Override
        public MethodId id() {
            return MethodId.TX_SELECT;
        }
    }

    /** {@code tx.select-ok}: the channel is in transaction mode. */
    record SelectOk() implements TxMethod {
        @Override
        public MethodId id() {
            return MethodId.TX_SELECT_OK;
        }
    }

    /** {@code tx.commit}: commits the current transaction. */
    record Commit() implements TxMethod {
        @Override
        public MethodId id() {
            return MethodId.TX_COMMIT;
        }
    }

    /** {@code tx.commit-ok}: the transaction is committed. */
    record CommitOk() implements TxMethod {
        @Override
        public MethodId id() {
            return MethodId.TX_COMMIT_OK;
        }
    }

    /** {@code tx.rollback}: abandons the current transaction. */
    record Rollback() implements TxMethod {
        @Override
        public MethodId id() {
            return MethodId.TX_ROLLBACK;
        }
    }

    /** {@code tx.rollback-ok}: the transaction is rolled back. */
    record RollbackOk() implements TxMethod {
        @Override
        public MethodId id() {
            return MethodId.TX_ROLLBACK_OK;
        }
    }
}
