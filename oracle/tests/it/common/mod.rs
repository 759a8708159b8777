#![allow(dead_code)]

use std::path::Path;

use fencehound_oracle::{judge, Context, Judgement, OracleError, OracleSpec, Outputs};

/// Parses one `[[oracle]]` table's body.
pub fn spec(toml_text: &str) -> OracleSpec {
    match toml::from_str(toml_text) {
        Ok(s) => s,
        Err(e) => panic!("bad spec in test: {e}\n{toml_text}"),
    }
}

/// Everything a judgement looks at, owned.
#[derive(Default)]
pub struct World {
    pub outputs: Outputs,
    pub inputs: Outputs,
    pub golden: Option<Outputs>,
}

impl World {
    pub fn judge_in(
        &self,
        specs: &[OracleSpec],
        base_dir: &Path,
    ) -> Result<Judgement, OracleError> {
        let cx = Context {
            outputs: &self.outputs,
            inputs: &self.inputs,
            golden: self.golden.as_ref(),
            base_dir,
        };
        judge(specs, &cx)
    }

    pub fn judge(&self, specs: &[OracleSpec]) -> Result<Judgement, OracleError> {
        self.judge_in(specs, Path::new(""))
    }
}
