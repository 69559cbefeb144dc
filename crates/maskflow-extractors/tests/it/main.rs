//! The extractors' integration tests, one binary, one module per format.

mod csv;
mod documents;
mod excel;
mod pdf_tables;
