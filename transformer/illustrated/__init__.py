"""An executable Illustrated Transformer: the explanations of "The Illustrated Transformer"
(J. Alammar) and "Transformers Explained Visually", part 4 (K. Doshi), section by section,
with every number and picture computed on the spot by a real model.

    subject = load_subject("runs/toy-en-es", out="docs/illustrated")   # or checkpoint=None
    path, sections = write_walkthrough(subject)

The prose is `walkthrough.template.md` in this folder, Markdown with `${name}` fields, and can
be edited without touching the code (see `page`). The modules:

- `subject`: the model to illustrate (`load_subject`: a run folder's checkpoint, or a model
  freshly initialized from a seed on the toy-en-es vocabulary with the main job's
  configuration);
- `sections`: one `section_N_*` function per section, computing the values its part of the
  template names and the figures it shows;
- `steps`: one attention head computed vector by vector, as the article's six steps do, and
  `check_step_by_step`, asserting that it equals what `MultiHeadAttention` computes in one
  batched call (weights, the z vectors before W_O, and the output after it);
- `probes`, `figures`, `markdown`: running and watching the model, drawing the figures (on
  matplotlib's Agg canvas, the `examples` extra), formatting the values;
- `page`: filling the template and writing `out/walkthrough.md` (`write_walkthrough`).

The same sections live, on a sentence the reader types (`examples/explain.py`,
docs/illustrated/explain.md):

- `explanation`: `explain(translator, sentence)`, every panel's numbers as JSON
  (docs/illustrated/data.md), recorded (`recording`) as translate.py's forward pass runs;
- `app`: `ExplainServer`, the local web app (the page, and `POST /explain`);
- `export`: `export_page`, the page of given sentences as one offline HTML file;
- `explain_page`: the page both serve, `explain.template.html` with `static/explain.js` (the
  one renderer) and `static/explain.css` inlined.
"""

from .page import write_walkthrough
from .sections import (
    ANIMAL,
    BALL,
    CAT,
    SECTIONS,
    Section,
    section_1_stacks,
    section_2_embeddings,
    section_3_six_steps,
    section_4_matrices,
    section_5_heads,
    section_6_factor_matrix,
    section_7_positions,
    section_8_residuals,
    section_9_decoder,
    two_word_input,
)
from .steps import attention_batched, attention_step_by_step, check_step_by_step
from .subject import Subject, load_subject
