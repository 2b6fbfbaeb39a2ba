"""The merchant's data source: uploads, sync into immutable dataset versions, identifier coverage."""
