"""Web-archive collections: indexes of earlier crawls' captures, looked up to deduplicate."""
