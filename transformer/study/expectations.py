"""What the gradient-flow study expects, fixed before it runs: one Expectation per judged
figure, the one place its bound is written (the verdicts and the figures both read it).

Each quotes the paper as read for this study: `read` says whether its text or only its
abstract (or a method summary) was read; where only an abstract was read the rule is this
study's reading of it, and says so. `threshold_from` says where a bound comes from: the
paper's own number, a constant of the theory, or a choice (then which, and on which data).
"""

from dataclasses import dataclass

DONG = ("Dong et al. 2021, §1 (Introduction); its figure of the relative residual by layer "
        "(BERT, ALBERT, XLNet, at init and trained: its number not read)", "text",
        "Surprisingly, we find that pure self-attention networks (SANs), i.e., transformers "
        "with skip connections and multi-layer perceptrons (MLPs) disabled, lose expressive "
        "power doubly exponentially with respect to network depth. More specifically, we prove "
        "that the output converges with a cubic rate to a rank one matrix that has identical "
        "rows. [...] Our analysis indicates that skip connections play a key role in "
        "mitigating rank collapse, and MLPs can slow down the convergence [§1]. The figure "
        "plots, per layer l, ‖res(SAN_l(X))‖_{1,∞} / ‖SAN_l(X)‖_{1,∞}, res(X) = X − 1·x̄ᵀ, for "
        "SAN, SAN + MLP, SAN + skip and the transformer.")
XIONG = ("Xiong et al. 2020, abstract (its §3, the lemmas, Theorem 1 and the warm-up "
         "experiments, was not reachable for this study: rules on them are this study's "
         "reading)", "abstract",
         "To train a Transformer however, one usually needs a carefully designed learning rate "
         "warm-up stage, which is shown to be crucial to the final performance but will slow "
         "down the optimization and bring more hyper-parameter tunings. [...] for the "
         "original-designed Post-LN Transformer, which places the layer normalization "
         "between the residual blocks, the expected gradients of the parameters near the output "
         "layer are large. Therefore, using a large learning rate on those gradients makes the "
         "training unstable. The warm-up stage is practically helpful for avoiding this problem. "
         "[...] if the layer normalization is put inside the residual blocks (recently proposed "
         "as Pre-LN Transformer), the gradients are well-behaved at initialization. [...] "
         "Pre-LN Transformers without the warm-up stage can reach comparable results with "
         "baselines")
LIU = ("Liu et al. 2020, abstract and §1", "text",
       "unbalanced gradients are not the root cause of the instability of training. Instead, we "
       "identify an amplification effect [...] heavy dependency on its residual branch makes "
       "training unstable, since it amplifies small parameter perturbations (e.g., parameter "
       "updates) and results in significant disturbances in the model output [abstract]. "
       "First, we find that a Post-LN layer has a heavier dependency on its residual branch "
       "than a Pre-LN layer. For example, at initialization, a Pre-LN layer has roughly the "
       "same dependency on its residual branch and any previous layer, whereas a Post-LN layer "
       "has a stronger dependency on its residual branch [§1]")
NOCI_SHI = ("Noci et al. 2022, §1 and Fig. 1 caption (text); Shi et al. 2022 (its abstract "
            "only)", "text",
            "Noci et al.: Unless adequate residual scaling is used at initialization, increasing "
            "depth leads to an increase in the tokens' alignment at initialization, which can "
            "inhibit training. [Fig. 1, POST-LN Transformers] [...] In the absence of residual "
            "connections, Dong et al. (2021) proved that at initialization the rank of the "
            "sequence representation collapses doubly exponentially with depth, and both layer "
            "normalization and fully connected layers can only partially alleviate the speed of "
            "degeneracy. [§1] Shi et al.: layer normalization plays a key role in the "
            "over-smoothing issue of Transformer-based models. Specifically, if the standard "
            "deviation of layer normalization is sufficiently large, the output of Transformer "
            "stacks will converge to a specific low-rank subspace and result in over-smoothing.")
LIU_INTRO = ("Liu et al. 2020, §1 (§3, where the paper measures the vanishing sublayer by "
             "sublayer, was not among the pages read)", "text",
             "We recognize that gradient vanishing issue is not the direct reason causing such "
             "difference, since fixing this issue alone cannot stabilize Post-LN training. It "
             "implies that, besides unbalanced gradients, there exist other factors influencing "
             "model training greatly.")
REZERO = ("Bachlechner et al. 2020, abstract and §1", "text",
          "ReZero, a simple change to the architecture that initializes an arbitrary layer as "
          "the identity map [...] we are the first to train Transformers over 100 layers without "
          "learning rate warm-up or LayerNorm [...] We observe significantly accelerated "
          "convergence in ReZero networks compared to regular residual networks with "
          "normalization.")
DEEPNET = ("Wang et al. 2022 (DeepNet), abstract", "abstract",
           "we introduce a new normalization function (DeepNorm) to modify the residual "
           "connection in Transformer, accompanying with theoretically derived initialization. "
           "In-depth theoretical analysis shows that model updates can be bounded in a stable "
           "way.")
TFIXUP = ("Huang et al. 2020 (T-Fixup), abstract", "abstract",
          "we then propose a new weight initialization scheme with theoretical justification, "
          "that enables training without warmup or layer normalization.")


@dataclass(frozen=True)
class Expectation:
    """A falsifiable rule: the figure's mean over seeds lies in [low, high] (None: unbounded on
    that side). `source`, `read` and `quote` are the paper as read; `rule` the claim in this
    study's words; `threshold_from` where the bound comes from."""

    key: str
    source: str
    read: str
    quote: str
    rule: str
    low: float | None = None
    high: float | None = None
    threshold_from: str = ""

    def bound(self, side: str) -> float:
        """The bound on `side` ("low" or "high"), for a figure or a derived rule to read."""
        value = {"low": self.low, "high": self.high}[side]
        if value is None:
            raise ValueError(f"expectation {self.key!r} has no {side} bound; read its other one")
        return value


def _make(key: str, paper: tuple[str, str, str], rule: str, low: float | None = None,
          high: float | None = None, threshold_from: str = "") -> Expectation:
    source, read, quote = paper
    return Expectation(key, source, read, quote, rule, low, high, threshold_from)


EXPECTATIONS = {e.key: e for e in (
    # E1 (Xiong Fig. 3 / Thm. 1 as in the abstract; Liu: no vanishing in the encoder)
    _make("E1.post_ln_decoder", XIONG, "post-LN decoder: the bias-corrected expected ‖∂L/∂W2‖ "
          "of the last layer is at least twice layer 1's (large near the output)", 2.0, None,
          "a choice: 'large' read as a factor 2 at 6 layers"),
    _make("E1.pre_ln_decoder", XIONG, "pre-LN decoder: last layer / layer 1 at most 1.25 "
          "(well-behaved: not growing towards the output)", None, 1.25,
          "a choice: 25% allowed for the lower layers' larger share"),
    _make("E1.post_ln_encoder", LIU, "post-LN encoder: last / layer 1 in [0.5, 2] (gradients "
          "neither vanish nor grow: 'unbalanced gradients are not the root cause')", 0.5, 2.0,
          "a choice: a factor 2 either way"),
    _make("E1.post_ln_decoder_attenuation", LIU_INTRO, "post-LN decoder at init: ‖∂L/∂x‖ at "
          "the decoder's input (layer 1) over at its last layer's output at most 0.5 (the "
          "gradient vanishes on its way down the decoder)", None, 0.5,
          "a choice: half over 6 layers; the decoder as the place of the vanishing is this "
          "study's reading (§3 not read)"),
    # E2 (Xiong Thm. 1; only the abstract read: the slopes are this study's reading)
    _make("E2.post_ln_slope", XIONG, "post-LN: log-log slope of the last layer's expected "
          "‖∂L/∂W2‖ against depth near 0 (independent of depth)", -0.25, 0.25,
          "the theory's 0 ± 0.25"),
    _make("E2.pre_ln_slope", XIONG, "pre-LN: the slope near -1/2 (falls as 1/√L)", -0.8, -0.2,
          "the theory's -0.5 ± 0.3"),
    # E3 (Xiong's lemmas; only the abstract read: the constants are this study's derivation
    # for its initialisation, c = E‖FFN(x)‖²/‖x‖²)
    _make("E3.post_ln_input", XIONG, "post-LN: the LayerNorm input after the FFN has "
          "‖x‖²/d = 1 + c (±10%)", 0.9, 1.1, "the theory's 1 + c, ±10% for finite width"),
    _make("E3.pre_ln_growth_low", XIONG, "pre-LN: the stream grows by at least c·d per layer "
          "(lower bound; the ratio growth / c is judged)", 1.0, None,
          "the lemma's lower bound (1 + l/2)·d with c = 1/2, as this study restates it: the "
          "lemma's text was not among the pages read"),
    _make("E3.pre_ln_growth_high", XIONG, "pre-LN: and by at most 3c·d per layer (upper "
          "bound; the ratio growth / c is judged)", None, 3.0,
          "the lemma's upper bound (1 + 3l/2)·d with c = 1/2, as this study restates it: the "
          "lemma's text was not among the pages read"),
    # E4 (Dong)
    _make("E4.pure_rate", DONG, "pure self-attention stack: -log(token share) grows "
          "geometrically (doubly exponential collapse; the proof's rate is cubic, a ratio of "
          "3): the median over layers of the ratio of successive layers' -log share (share "
          "over layer 0's), above the float64 floor, is at least 1.5", 1.5, None,
          "a choice between linear growth (ratio → 1) and the proof's cubic rate (3): the "
          "theorem bounds the residual from above, so a measured ratio below 3 does not "
          "contradict it, one near 1 would"),
    _make("E4.skip_rate", DONG, "attention + skip: -log(token share) grows at most linearly "
          "(the skip mitigates the collapse; the paper's figure shows SAN + skip keeping its "
          "relative residual where SAN loses it): the median over layers l >= 2 of "
          "(-log s_l)/(-log s_{l-1}) × (l-1)/l is at most 1.25, i.e. most layers grow -log s "
          "at most 25% faster than linearly", None, 1.25,
          "a choice: linear growth gives 1, the pure stack's cubic rate 3·(l-1)/l; the median, "
          "not the largest layer, since one layer that barely moves the share makes the next "
          "ratio large alone"),
    # E4 (the full model at init: the share a LayerNorm'd identity path keeps; this study's
    # derivation, the finding as Noci et al. and Shi et al. report it)
    _make("E4.post_ln_path", NOCI_SHI, "post-LN: token share at layer L over layer 0, divided "
          "by the identity path's prediction ∏ over blocks of ‖x‖²/‖x + branch‖² (from the "
          "LayerNorm input and branch sizes), at least 1: the LayerNorm's division of the "
          "identity path by the sum's size accounts for the share lost", 1.0, None,
          "the derivation's bound (x and the branch uncorrelated at init, the branches' "
          "between-token power only adds), no margin"),
    _make("E4.pre_ln_path", NOCI_SHI, "pre-LN: the same ratio at least 1 (each branch adds to "
          "an unnormalised stream)", 1.0, None, "the same bound"),
    # E5/E6 (Xiong's two factors)
    _make("E5.no_warmup_fails", XIONG, "post-LN without warmup at the peak rate: exact match "
          "at most 0.5 (fails) on the copy task (the abstract: the warm-up is crucial to the "
          "final performance; at which peak is not in it)", None, 0.5,
          "a choice: half the test split"),
    _make("E5.warmup_never_hurts", XIONG, "post-LN: each longer warmup's final loss minus the "
          "shorter one's, the largest such difference, at most +0.1 (never hurts: narrower than "
          "the abstract, which calls the warm-up crucial to the final performance and says "
          "nothing of longer against shorter ones)", None, 0.1,
          "a choice: 0.1 nats (no pilot run yet; a pilot would use seed 0, not a test seed)"),
    _make("E5.longest_beats_none", XIONG, "post-LN: final loss without warmup minus with the "
          "longest warmup at least 0.1", 0.1, None, "the same 0.1 nats"),
    _make("E5.pre_ln_solves", XIONG, "pre-LN without warmup: exact match at least 0.95 "
          "(solves; the abstract: comparable results with baselines without the warm-up)", 0.95,
          None, "examples/copy_task.py's bar for solving"),
    # E7 (follows from E3 and the LayerNorm Jacobian: this study's derivation)
    _make("E7.pre_ln_fall", XIONG, "pre-LN: the branch's share of ∂L/∂x at the last layer "
          "over layer 1's at most 0.8 (falls as the stream grows)", None, 0.8,
          "a choice: a 20% fall at 6 layers"),
    _make("E7.pre_ln_theory", XIONG, "pre-LN: the last layer's share over the prediction "
          "share_1·‖x_1‖/‖x_l‖ in [0.67, 1.5]", 0.67, 1.5, "a choice: a factor 1.5 either way"),
    # E8 (ReZero)
    _make("E8.identity", REZERO, "ReZero at init: max ‖x_l − x_0‖/‖x_0‖ at most 1e-6 (the "
          "identity map)", None, 1e-6, "float32 rounding"),
    _make("E8.faster", REZERO, "ReZero's training loss after the budget minus post-LN's, at "
          "equal depth and rate without warmup, at most 0 (converges faster)", None, 0.0,
          "the paper's direction, no margin"),
    _make("E8.faster_than_pre_ln", REZERO, "ReZero's training loss after the budget minus "
          "pre-LN's (a residual network with normalization too), at equal depth and rate "
          "without warmup, at most 0 (converges faster)", None, 0.0,
          "a choice: the paper's direction, no margin, as against post-LN"),
    _make("E8.deep_without_warmup", REZERO, "the deep ReZero stack trains without warmup or "
          "LayerNorm: its training loss after the budget minus its first step's at most -1 "
          "nat, and finite (a diverged run's NaN fails the rule)", None, -1.0,
          "a choice: 1 nat below the first step's loss, a fall an untrained stack does not "
          "make by chance"),
    # E9 (Liu; Admin, DeepNorm, T-Fixup as the remedies)
    _make("E9.paired_slope", LIU, "post-LN's log-log slope of the output change against "
          "depth minus pre-LN's, paired by seed: at least 0.3 (post-LN amplifies more)", 0.3,
          None, "a choice: Liu's O(N) against O(log N) give 1 and about 0.3"),
    _make("E9.remedy_slope", DEEPNET, "a remedy's slope minus post-LN's, paired by seed: at "
          "most -0.3 (the remedy bounds the update)", None, -0.3, "the same 0.3"),
)}


def expectation(key: str) -> Expectation:
    if key not in EXPECTATIONS:
        raise KeyError(f"no expectation {key!r} in transformer/study/expectations.py; "
                       f"known: {', '.join(EXPECTATIONS)}")
    return EXPECTATIONS[key]
