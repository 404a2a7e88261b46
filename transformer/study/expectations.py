"""What the gradient-flow study expects, fixed before the runs that judge it.

Each Expectation is a paper's claim under the paper's conditions, quoted verbatim with its
section, lemma or figure, and the conditions of that claim that this project's model meets or
does not. Its `basis` says what the rule is:

- "paper": the paper's own claim, its bound the paper's (or derived from the paper's proof for
  this model, where the proof's conditions hold: `conditions` says which);
- "derivation": this study's derivation, carried beyond what the paper treats (said where);
- "extension": this study's question beside the paper's claim (judged, and labelled so);
- "mechanism": a consequence of other checks (E7): labelled, its experiment not counted.

`threshold_from` says where each bound comes from: the paper, a constant of the proof, or a
choice of this study (then why). Every check is judged on the 95% interval of its mean over
seeds (statistics.py): held when the interval lies on the claimed side of every bound.

E3's bounds, derived from Xiong et al. 2020's proof of Lemma 2 (App. C) for this model, are in
`ffn_gain` and `pre_ln_growth_bounds` below.
"""

from dataclasses import dataclass

# ----- the papers as quoted ---------------------------------------------------------------------
XIONG_EXTENDED = (
    "Xiong et al. 2020, §3.4 'On the extended theory' (Fig. 3(a,b)) and §3.3 'Extended theory'",
    "We calculate the gradient norm of each paramter matrix in 6-6 Post-LN/Pre-LN Transformer. "
    "[...] For elements in a parameter matrix, we calculate their expected gradients and use the "
    "Frobenius norm of those values as the scale of the expected gradient of the matrix. Figure "
    "3(a) and 3(b) shows those statistics for FFN sub-layers. [...] the scale of the expected "
    "gradients grows along with the layer index for the Post-LN Transformer. On the contrary, "
    "the scale almost keeps the same for different layers in the Pre-LN Transformer. [§3.4] "
    "Our main result is that the gradient norm in the Post-LN Transformer is large for the "
    "parameters near the output and will be likely to decay as the layer index l decreases. "
    "[§3.3]")
XIONG_THEOREM = (
    "Xiong et al. 2020, Theorem 1 and §3.4 'On Theorem 1' (Fig. 3(c,d))",
    "Theorem 1 suggests that for any sizes of the Post-LN Transformer, the scale of the gradient "
    "norm in the last FFN sub-layer remains the same. On the contrary, that of the Pre-LN "
    "Transformer decreases as the size of the model grows. We calculate and record the gradient "
    "norm in the last FFN sub-layer in 6-6/8-8/10-10/12-12/14-14 Post-LN/Pre-LN Transformer "
    "models at initialization. [...] the gradient norm remains in the Post-LN Transformer "
    "(around 1.6) and decreases in the Pre-LN Transformer.")
XIONG_LEMMA2 = (
    "Xiong et al. 2020, Lemma 2 (§3.3) and its proof (App. C)",
    "At initialization, for the Post-LN Transformer, E(‖x^{post,5}_{l,i}‖²) = 3/2·d for all "
    "l > 0 and i. For the Pre-LN Transformer, (1 + l/2)d ≤ E(‖x^{pre}_{l,i}‖²) ≤ (1 + 3l/2)d "
    "for all l > 0 and i. Expectations are taken over the input and the randomness of "
    "initialization. [Lemma 2] It is easy to see that we have E(‖x^{pre}_{l,i}‖²) ≤ "
    "E(‖x^{pre,3}_{l,i}‖²) ≤ E(‖x^{pre}_{l,i}‖²) + d. [...] = E(‖x^{pre,3}_{l,i}‖²) + 1/2·d "
    "[App. C]")
XIONG_LEMMA1 = (
    "Xiong et al. 2020, Lemma 1 (§3.3) as App. C applies it",
    "If X ∈ R^d is a Gaussian vector, X ~ N(0, σ²I_d), then E(‖ReLU(X)‖²) = 1/2·σ²d. [Lemma 1] "
    "Again, for the ReLU activation function, the elements in W^{1,l} and W^{2,l} are i.i.d. "
    "Gaussian random variables sampled from N(0, 1/d). According to Lemma 1, we have [...] "
    "E(‖x^{post,4}_{l,i}‖²) = [...] = d/2 [App. C]")
XIONG_WARMUP = (
    "Xiong et al. 2020, §3.2 'Results and discussions' (Fig. 2)",
    "First, we can see that for both optimizers, the learning rate warm-up stage is essential. "
    "Without the warm-up stage, the BLEU score of the model trained with Adam optimizer can only "
    "achieve 8.45. As a comparison, the model trained using the warm-up stage can achieve "
    "around 34 in terms of BLEU score. [...] Second, we can see that the optimization process "
    "is sensitive to the value of T_warmup [...] when setting T_warmup = 500, the learned "
    "models with Adam achieve only 31.16 and 2.77 in term of BLEU score for lr_max = 5e-4 and "
    "1e-3 respectively.")
XIONG_PRE_LN = (
    "Xiong et al. 2020, §4.1 and §4.2 'Machine Translation'",
    "We train the Post-LN Transformer using the learning rate warm-up stage as the baseline. "
    "[...] We set lr_max as same as the initial learning rates of the Pre-LN Transformer in "
    "each corresponding experiment. [§4.1] First, as we can see from the figure, the learning "
    "rate warm-up stage is not critical anymore for training the Pre-LN Transformer and the "
    "performance of the learned model is competitive. For example, on the IWSLT14 De-En task, "
    "the BLEU score and validation loss of the Pre-LN Transformer can achieve around 34 and 4, "
    "which are comparable with the performance of the Post-LN Transformer. [§4.2]")
XIONG_JACOBIAN = (
    "Xiong et al. 2020, Lemma 3 (§3.3; App. D) and App. F",
    "For x ∈ R^d, we have ‖J_LN(x)‖₂ = O(√d/‖x‖₂) in which J_LN(x) = ∂LN(x)/∂x. [Lemma 3] If l "
    "is sufficiently large, the norm of J_LN(x^{pre}_{j,i}) and J_LN(x^{pre,3}_{j,i}) are very "
    "small (of order O(1/√j)) [App. F]")
DONG = (
    "Dong et al. 2021, abstract and §1",
    "Specifically, without skip connections or multi-layer perceptrons (MLPs), the output "
    "converges doubly exponentially to a rank-1 matrix. On the other hand, skip connections "
    "and MLPs stop the output from degeneration. [abstract] More specifically, we prove that "
    "the output converges with a cubic rate to a rank one matrix that has identical rows. [...] "
    "Our analysis indicates that skip connections play a key role in mitigating rank collapse "
    "[§1]")
REZERO_IDENTITY = (
    "Bachlechner et al. 2020, abstract and §1",
    "ReZero, a simple change to the architecture that initializes an arbitrary layer as the "
    "identity map [abstract] ReZero initializes each layer to perform the identity operation. "
    "[§1]")
REZERO_FASTER = (
    "Bachlechner et al. 2020, §1 'Faster convergence'",
    "We observe significantly accelerated convergence in ReZero networks compared to regular "
    "residual networks with normalization. When ReZero is applied to Transformers, we converge "
    "56% faster than the vanilla Transformer to reach 1.2 BPB on the enwiki8 language modeling "
    "benchmark.")
REZERO_DEEP = (
    "Bachlechner et al. 2020, §1 'Deeper learning'",
    "we are the first to train Transformers over 100 layers without learning rate warm-up or "
    "LayerNorm.")
LIU = (
    "Liu et al. 2020, abstract; the output change as its authors' admin-torch README defines it "
    "(the paper's §4 and Theorem 2 are not available to this study)",
    "heavy dependency on its residual branch makes training unstable, since it amplifies small "
    "parameter perturbations (e.g., parameter updates) and results in significant disturbances "
    "in the model output [abstract] For Transformer f, input x, randomly initialized weight w, "
    "we describe its stability (output_change_scale) as E[|f(x, w) - f(x, w + δ)|²] In our "
    "study, we show that, an original n-layer Transformer's output_change_scale is O(n), which "
    "unstabilizes its training. Admin stabilize Transformer's training by regulating this "
    "scale to O(logn) or O(1). [admin-torch README]")
DEEPNET = (
    "Wang et al. 2022 (DeepNet), abstract",
    "we introduce a new normalization function (DeepNorm) to modify the residual connection in "
    "Transformer, accompanying with theoretically derived initialization. In-depth theoretical "
    "analysis shows that model updates can be bounded in a stable way.")

# ----- E3: this model's bounds from App. C ---------------------------------------------------


def ffn_gain(d_model: int, d_ff: int) -> float:
    """c = E‖FFN(LN(x))‖² / d at init for this model: 2·d_ff·d/(d + d_ff)².

    App. C computes the FFN's addition as E‖ReLU(x W¹) W²‖² = E(½‖x‖²) = d/2 for d × d
    matrices with N(0, 1/d) entries (Lemma 1). Here W¹ is d × d_ff and W² d_ff × d,
    Xavier-uniform: variance 2/(d + d_ff), zero biases. For ‖x‖² = d (a LayerNorm's output at
    init, γ = 1, β = 0) each of the d_ff pre-activations has variance d·2/(d + d_ff) and is
    symmetric about 0 given x, so ReLU keeps half its power (Lemma 1's ½ needs only the
    symmetry): E‖ReLU(x W¹)‖² = d_ff·d/(d + d_ff). W² multiplies the power by
    d·2/(d + d_ff): E‖FFN‖² = 2·d_ff·d²/(d + d_ff)² = c·d. For d_ff = d, c = ½: App. C's d/2."""
    return 2 * d_model * d_ff / (d_model + d_ff) ** 2


def pre_ln_growth_bounds(stack: str, c: float) -> tuple[float, float]:
    """(low, high) of E(‖x_{l+1}‖² − ‖x_l‖²)/d, a pre-LN layer's growth of the stream per
    dimension at init, for `stack` ("encoder" or "decoder"), c = `ffn_gain`.

    App. C's proof, per layer: the attention sub-layer adds between 0 and d, "E(‖x^{pre}‖²) ≤
    E(‖x^{pre,3}‖²) ≤ E(‖x^{pre}‖²) + d", and the FFN adds d/2 (c·d here). In this model:

    - cross terms: E(x·F(x)ᵀ) = 0 for each sub-layer F, whose last matrix (W^O, W²) is
      zero-mean and independent of x (App. C's step, met: zero biases, no dropout);
    - attention: the output is (Σ_j a_ij LN(x_j)) W^V W^O per head, concatenated. App. C takes
      one head with uniform weights a_ij = 1/n and W^V alone. For any weights a_ij ≥ 0 summing
      to 1 (learned W^Q, W^K, several heads), ‖Σ_j a_ij LN(x_j)‖² ≤ Σ_j a_ij ‖LN(x_j)‖² = d
      (convexity); W^V's d × d_head slice of each head (variance 1/d, Xavier on d × d) keeps
      d_head/d of that power, the heads' slices sum to 1, and W^O (d × d, variance 1/d) keeps
      the power: the attention adds between 0 and d, App. C's bound, met;
    - FFN: c·d (`ffn_gain`), App. C's d/2 re-derived for d_ff ≠ d.

    So an encoder layer grows the stream by between c·d and (1 + c)·d (App. C's ½d and 3/2·d
    with c = ½). A decoder layer has a second attention sub-layer, over the encoder's output
    (after its final LayerNorm: ‖·‖² = d per token): by the same step it adds between 0 and d,
    and a decoder layer grows by between c·d and (2 + c)·d. The decoder's bound is this study's
    derivation: the paper does not treat a decoder layer."""
    attention_layers = {"encoder": 1, "decoder": 2}[stack]
    return c, attention_layers + c


# ----- the expectations --------------------------------------------------------------------------
@dataclass(frozen=True)
class Expectation:
    """A falsifiable rule: the 95% interval of the figure's mean over seeds lies in [low, high]
    (None: unbounded on that side). `source` and `quote` are the paper as read (section, lemma
    or figure; verbatim); `conditions` the paper's conditions of the claim and which of them
    this model meets; `rule` the claim in this study's words; `basis` "paper", "derivation",
    "extension" or "mechanism" (the module's docstring); `threshold_from` where the bound comes
    from."""

    key: str
    source: str
    quote: str
    conditions: str
    rule: str
    basis: str
    low: float | None = None
    high: float | None = None
    threshold_from: str = ""

    def bound(self, side: str) -> float:
        """The bound on `side` ("low" or "high"), for a figure or a derived rule to read."""
        value = {"low": self.low, "high": self.high}[side]
        if value is None:
            raise ValueError(f"expectation {self.key!r} has no {side} bound; read its other one")
        return value


BASES = ("paper", "derivation", "extension", "mechanism")
INIT_CONDITIONS = ("at initialization, without dropout; Xavier initialization (here uniform, "
                   "the paper's variance 2/(n_in + n_out)), zero biases, LayerNorm γ = 1, "
                   "β = 0: met")
# post-LN's growth from layer 1 to layer 6 that App. F's factor (2/3)^((L − l)/2) gives:
# (3/2)^(5/2) = 2.76; "almost keeps the same" is judged within its square root either way
PRE_LN_BAND = 2.76 ** 0.5
# E5: the peak, chosen by the pilot (`warmup_pilot`, seeds 200-201, never judged) as the
# largest of 1e-3, 2e-3, 5e-3 at which post-LN with the longest warmup trains clearly below the
# plateau of an untrained model: see PILOT in experiments/e5_e6_warmup.py
WARMUP_PEAK = 2e-3
TRAINS = 0.5  # E6: the baseline trains where its mean exact match reaches this
TARGET_LOSS = 4.9  # E8: the training loss (mean of 10 steps) each scheme's steps are counted to


def _make(key: str, paper: tuple[str, str], conditions: str, rule: str, basis: str,
          low: float | None = None, high: float | None = None,
          threshold_from: str = "") -> Expectation:
    if basis not in BASES:
        raise ValueError(f"expectation {key!r}: basis {basis!r} is not one of {BASES}")
    source, quote = paper
    return Expectation(key, source, quote, conditions, rule, basis, low, high, threshold_from)


APP_C = ("App. C's setting, built as it states: one head, W^Q = W^K = 0 (uniform attention), "
         "W^V, W¹, W² d × d with i.i.d. N(0, 1/d) entries, no W^O (the identity), zero biases, "
         "LayerNorm γ = 1, β = 0, d_ff = d, at init, no dropout: met")
EXPECTATIONS = {e.key: e for e in (
    # E0: the instruments where the theory is exact (a miss is an instrument bug)
    _make("E0.lemma1_ffn", XIONG_LEMMA1, APP_C, "post-LN: the FFN's output ‖x^{post,4}‖²/d "
          "within ±5% of 1/2", "paper", low=0.475, high=0.525,
          threshold_from="the lemma's equality; ±5% a choice for LayerNorm's ε and float32"),
    _make("E0.lemma2_post_ln", XIONG_LEMMA2, APP_C, "post-LN: ‖x^{post,5}‖²/d within ±5% of "
          "3/2", "paper", low=1.425, high=1.575,
          threshold_from="the lemma's equality; ±5% as for Lemma 1"),
    _make("E0.lemma2_pre_ln_low", XIONG_LEMMA2, APP_C + "; the encoder (the paper's layer)",
          "pre-LN encoder: the stream's mean growth per layer per dimension at least 1/2",
          "paper", low=0.5, threshold_from="the proof's lower step, d/2 a layer"),
    _make("E0.lemma2_pre_ln_high", XIONG_LEMMA2, APP_C + "; the encoder",
          "pre-LN encoder: the stream's mean growth per layer per dimension at most 3/2",
          "paper", high=1.5, threshold_from="the proof's upper step, 3/2·d a layer"),
    _make("E0.attention_at_most_d", XIONG_LEMMA2, APP_C + "; the encoder",
          "pre-LN encoder: the attention sub-layer's output ‖x^{pre,2}‖²/d at most 1", "paper",
          high=1.0, threshold_from="the proof's step: the attention adds at most d"),
    # E1: Fig. 3(a,b) at 6-6
    _make("E1.post_ln_decoder", XIONG_EXTENDED, INIT_CONDITIONS + "; 6-6 layers as Fig. 3(a,b), "
          "d_model 32 instead of 512; Fig. 3's stack is not stated: the decoder is judged, its "
          "layers are the ones 'near the output' (the encoder reported)",
          "post-LN decoder: the expected ‖∂L/∂W2‖ of layer 6 over layer 1's above 1 (grows "
          "along with the layer index)", "paper", low=1.0,
          threshold_from="the paper: 'grows' (App. F's factor (2/3)^((L − l)/2), 2.76 over six "
                         "layers, is 'preliminary': not required)"),
    _make("E1.pre_ln_decoder", XIONG_EXTENDED, INIT_CONDITIONS + "; 6-6 layers, the decoder as "
          "for post-LN", "pre-LN decoder: layer 6 over layer 1 within a factor 1.66 either way "
          "(almost keeps the same)", "paper", low=1 / PRE_LN_BAND, high=PRE_LN_BAND,
          threshold_from="a choice: 'almost the same' read as within the square root of the "
                         "post-LN growth App. F gives over six layers, (3/2)^(5/2) = 2.76, so "
                         "that the band lies halfway (on a log scale) between no change and "
                         "post-LN's predicted profile"),
    # E2: Theorem 1, Fig. 3(c,d) at 6-6 to 14-14
    _make("E2.post_ln_slope", XIONG_THEOREM, INIT_CONDITIONS + "; 6-6 to 14-14 layers as Fig. "
          "3(c,d); 'the last FFN sub-layer' of an encoder-decoder: the decoder's (the encoder's "
          "reported)", "post-LN: the log-log slope of the last layer's expected ‖∂L/∂W2‖ "
          "against depth within ±0.25 (remains the same)", "paper", low=-0.25, high=0.25,
          threshold_from="a choice: ±0.25 is a change of at most 24% over 6 to 14 layers, half "
                         "of pre-LN's 1/√L (Theorem 1's O-bound, slope -1/2)"),
    _make("E2.pre_ln_slope", XIONG_THEOREM, INIT_CONDITIONS + "; as for post-LN",
          "pre-LN: the slope below 0 (decreases as the size of the model grows)", "paper",
          high=0.0, threshold_from="the paper: 'decreases' (Theorem 1's O(d√(ln d / L)) is an "
                                   "upper bound: its slope -1/2 is reported, not required)"),
    # E3: Lemma 2, App. C, this model's bounds (pre_ln_growth_bounds)
    _make("E3.post_ln_input", XIONG_LEMMA2, INIT_CONDITIONS + "; App. C's d × d matrices with "
          "N(0, 1/d) entries: attention met, the FFN's d × d_ff re-derived (ffn_gain)",
          "post-LN: the LayerNorm input after the FFN, ‖x^{post,5}‖²/d, over 1 + c (App. C's "
          "3/2 with c = 1/2) within ±5%", "paper", low=0.95, high=1.05,
          threshold_from="the proof's equality for this model, 1 + c; ±5% a choice for "
                         "LayerNorm's ε and float32"),
    _make("E3.pre_ln_growth_encoder_low", XIONG_LEMMA2, INIT_CONDITIONS + "; the encoder layer "
          "is the paper's (pre_ln_growth_bounds says which conditions hold)",
          "pre-LN encoder: the mean growth per layer of ‖x_l‖²/d over c at least 1", "paper",
          low=1.0, threshold_from="the proof's lower bound for this model, c·d a layer"),
    _make("E3.pre_ln_growth_encoder_high", XIONG_LEMMA2, INIT_CONDITIONS + "; as the lower "
          "bound", "pre-LN encoder: the mean growth per layer of ‖x_l‖²/d over 1 + c at most 1",
          "paper", high=1.0,
          threshold_from="the proof's upper bound for this model, (1 + c)·d a layer (App. C's "
                         "3/2·d with c = 1/2)"),
    _make("E3.pre_ln_growth_decoder_low", XIONG_LEMMA2, INIT_CONDITIONS + "; the decoder's "
          "cross-attention is not in the paper: this study's derivation (pre_ln_growth_bounds)",
          "pre-LN decoder: the mean growth per layer over c at least 1", "derivation", low=1.0,
          threshold_from="this study's derivation from App. C, c·d a layer"),
    _make("E3.pre_ln_growth_decoder_high", XIONG_LEMMA2, INIT_CONDITIONS + "; as the lower "
          "bound", "pre-LN decoder: the mean growth per layer over 2 + c at most 1",
          "derivation", high=1.0,
          threshold_from="this study's derivation from App. C: two attention sub-layers of at "
                         "most d each, (2 + c)·d a layer"),
    # E4: Dong et al.
    _make("E4.pure_rate", DONG, "self-attention alone (skip connections and MLPs disabled), "
          "float64, Xavier-uniform weights, at init; the theorem's constants and norm are not "
          "available, so whether this model lies in the regime of its bound cannot be checked",
          "pure self-attention: the median over layers of the ratio of successive layers' "
          "-log(token share) at least 1.5 (doubly exponential: the cubic rate gives 3, single "
          "exponential decay 1)", "paper", low=1.5,
          threshold_from="a choice between 1 (single exponential) and the proof's cubic rate "
                         "3: the theorem bounds the residual from above, so a ratio below 3 "
                         "does not contradict it, one near 1 would"),
    _make("E4.skip_floor", DONG, "self-attention with skip connections, no MLP, no LayerNorm, "
          "float64, Xavier-uniform weights, at init, 12 layers",
          "attention + skip: the token share at layer 12 over layer 0's at least 0.1 (the skip "
          "stops the output from degeneration)", "paper", low=0.1,
          threshold_from="a choice: a tenth of the input's between-token power; a collapse "
                         "exponential in depth (a factor 0.55 a layer gives 8e-4 at layer 12) "
                         "falls far below it, a stopped one stays of order 1"),
    # E5: §3.2, at the pilot's peak and twice it
    _make("E5.warmup_essential", XIONG_WARMUP, "post-LN, Adam β = (0.9, 0.98), linear warmup "
          "then inverse square root decay as §3.2; toy translation, 6+6 layers, d_model 32, "
          "300 steps instead of IWSLT14 and epochs; at the peak a pilot chose (WARMUP_PEAK)",
          "post-LN at the pilot's peak: validation loss without warmup minus with the longest "
          "warmup, paired by seed, at least 0.1 nats", "paper", low=0.1,
          threshold_from="a choice: 0.1 nats, above the seeds' own spread of a trained arm"),
    _make("E5.short_warmup_hurts", XIONG_WARMUP, "as E5.warmup_essential, at twice the pilot's "
          "peak (§3.2's 5e-4 and 1e-3 differ by a factor 2)",
          "post-LN at twice the peak: validation loss with the short warmup minus with the "
          "longest, paired by seed, at least 0.1 nats", "paper", low=0.1,
          threshold_from="the same 0.1 nats"),
    # E6: §4.1-4.2, the copy task
    _make("E6.comparable", XIONG_PRE_LN, "Adam β = (0.9, 0.98); the baseline post-LN with "
          "warmup at the same lr_max as §4.1; the copy task, 6+6 layers, d_model 64, 600 steps; "
          "judged only where the baseline trains (its mean exact match at least TRAINS)",
          "pre-LN without warmup minus the baseline's exact match, paired by seed, at least "
          "-0.05 (comparable: not worse by more than 0.05)", "paper", low=-0.05,
          threshold_from="a choice: the paper gives no tolerance ('comparable'); 0.05 exact "
                         "match, one sentence in twenty"),
    # E7: the mechanism behind E1-E2's pre-LN profile (Lemma 3 and E3)
    _make("E7.pre_ln_fall", XIONG_JACOBIAN, INIT_CONDITIONS,
          "pre-LN: the branch's share of ∂L/∂x at layer 6 over layer 1's at most 0.8 (falls as "
          "the stream grows)", "mechanism", high=0.8,
          threshold_from="a choice: a 20% fall at 6 layers"),
    _make("E7.pre_ln_theory", XIONG_JACOBIAN, INIT_CONDITIONS,
          "pre-LN: layer 6's share over the prediction share_1·‖x_1‖/‖x_6‖ in [0.67, 1.5]",
          "mechanism", low=0.67, high=1.5, threshold_from="a choice: a factor 1.5 either way"),
    # E8: ReZero
    _make("E8.identity", REZERO_IDENTITY, "ReZero's α = 0 at init: met by construction",
          "ReZero at init: max ‖x_l − x_0‖/‖x_0‖ at most 1e-6 (the identity map)", "paper",
          high=1e-6, threshold_from="float32 rounding"),
    _make("E8.faster", REZERO_FASTER, "12-layer Transformers on enwiki8 in the paper; here 6+6 "
          "layers, toy translation, Adam at a constant rate without warmup, each scheme at its "
          "best of the peak rates 1e-3, 3e-3, 1e-2 (the paper's rates are not available)",
          "ReZero's steps to the target training loss minus post-LN's (the vanilla "
          "Transformer), paired by seed, each at its best rate, at most 0 (converges faster)",
          "paper", high=0.0,
          threshold_from="the paper's direction; the target loss (TARGET_LOSS) fixed from the "
                         "pilot, the 56% not required at this scale"),
    _make("E8.deep_without_warmup", REZERO_DEEP, "12 layers per stack, not over 100: this "
          "study's extension at the scale it can train",
          "a 12-layer ReZero stack trains without warmup or LayerNorm: its final training loss "
          "minus its first step's at most -1 nat", "extension", high=-1.0,
          threshold_from="a choice: 1 nat below the first step's loss, a fall an untrained "
                         "stack does not make by chance"),
    # E9: Liu et al., DeepNet
    _make("E9.paired_slope", LIU, "at init, random perturbations of every weight matrix of the "
          "layers by 1% of its rms (the README's δ, its size not stated); the decoder's output",
          "post-LN's log-log slope of the output change against depth minus pre-LN's, paired "
          "by seed, at least 0.3 (post-LN amplifies more)", "paper", low=0.3,
          threshold_from="a choice: O(n) against O(log n) give slopes 1 and about 0.3 over "
                         "2-12 layers; their difference 0.7, the bound 0.3 below it"),
    _make("E9.remedy_slope", DEEPNET, "as E9.paired_slope; Admin, DeepNorm and T-Fixup as "
          "transformer/residual.py builds them",
          "a remedy's slope minus post-LN's, paired by seed, at most -0.3 (the remedy bounds "
          "the update)", "paper", high=-0.3, threshold_from="the same 0.3"),
)}


def expectation(key: str) -> Expectation:
    if key not in EXPECTATIONS:
        raise KeyError(f"no expectation {key!r} in transformer/study/expectations.py; "
                       f"known: {', '.join(EXPECTATIONS)}")
    return EXPECTATIONS[key]
