//! The search parameters as they cross the boundary: a dict whose keys are exactly
//! `lichessbot_core::params::KEYS` (built by `lichessbot.search.searcher.core_params` from the one
//! declaration, `lichessbot.config.SearchParams`). A missing, unknown or mistyped key is a ValueError
//! naming it; the core has no defaults to fall back on.

use lichessbot_core::params::{Params, Value};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyString};

/// `params` (str -> bool | int | float | str) as the core's [`Params`]. Raises ValueError naming the key
/// that is missing, unknown, of another type, or out of the core's range.
pub fn params_from(params: &Bound<'_, PyDict>) -> PyResult<Params> {
    let mut values = Vec::with_capacity(params.len());
    for (k, v) in params.iter() {
        let key: String =
            k.extract().map_err(|_| PyValueError::new_err(format!("search parameter names are strings, got {k}")))?;
        // bool before int: a Python bool is an int.
        let value = if v.is_instance_of::<PyBool>() {
            Value::Bool(v.extract()?)
        } else if v.is_instance_of::<PyInt>() {
            Value::Int(
                v.extract()
                    .map_err(|_| PyValueError::new_err(format!("search parameter {key:?} is out of range: {v}")))?,
            )
        } else if v.is_instance_of::<PyFloat>() {
            Value::Float(v.extract()?)
        } else if v.is_instance_of::<PyString>() {
            Value::Str(v.extract()?)
        } else {
            return Err(PyValueError::new_err(format!(
                "search parameter {key:?} must be a bool, int, float or str, got {}",
                v.get_type().name()?
            )));
        };
        values.push((key, value));
    }
    Params::from_values(values).map_err(PyValueError::new_err)
}
