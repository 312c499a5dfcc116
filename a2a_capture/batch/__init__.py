"""Many sessions at once: which files form a session, running sessions on every core or on a
Dask cluster, and exporting the results as Parquet tables for a query engine."""
