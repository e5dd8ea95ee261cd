"""Where a study lives and how workers share it: `storages` (a journal file or a database URL),
`journal` (the journal file), `claims` with `claim_db`, `claim_ledger`, `claim_queries`,
`claim_schema` and `leases` (the exact budget across workers), `db_retry` and `db_timeouts`
(riding out database outages), `locks` (one runner per run folder) and `credentials` (storage
passwords, masked everywhere)."""
