"""Corpora: where text comes from (files, compressed, JSON Lines, Parquet, remote, a Dask cluster) and where
it can be cut into chunks."""
