r"""Similarity regression (Carterette & Allan 2007): relevance from the cluster hypothesis.

Per topic, the log-odds of relevance of document i is a weighted sum of its similarities to a shallow
pool of *feature documents* j (the judged ones):

.. math::

    \mathrm{logit}\,p_i = \beta_0 + \sum_j \beta_j\,\mathrm{sim}(i, j),

fitted to targets :math:`y_i=1` (judged relevant), 0 (judged nonrelevant) and the plus-one-smoothed
:math:`(|R|+1)/(|R|+|N|+2)` for unjudged documents, with the L2 penalty
:math:`\tfrac{\lambda}{2}\lVert\beta\rVert^2` — a Normal(0, 1/√λ) prior, λ = 1. (The paper writes the
penalty as :math:`\lambda\beta^\top\beta`; we use the Normal-prior scaling :math:`\lambda/2`, and λ is
configurable.) Similarities are cosines of TF-IDF vectors of the document texts (scikit-learn), or of
given embeddings, or any given similarity function.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.special import expit

from bayeval.data.rankdata import RankData
from bayeval.errors import BayevalInputError
from bayeval.relevance._fitting import Mode, ParamSpec, RelevanceModel
from bayeval.relevance._idata import Observed
from bayeval.relevance._kernels import CoefPrior, logistic_logpost, logistic_newton
from bayeval.relevance.config import SimilarityPrior

__all__ = ["SimilarityRegression", "cosine_from_embeddings", "cosine_from_rank_profiles", "cosine_from_texts",
           "feature_documents"]


def feature_documents(tr, max_features: int | None = None) -> np.ndarray:
    """Indices of a topic's feature documents: the judged ones, shallowest best rank first."""
    idx = np.flatnonzero(tr.judged)
    r = np.asarray(tr.ranks, dtype=np.int64)[idx]
    best = np.where(r > 0, r, np.iinfo(np.int64).max).min(axis=1) if r.shape[1] else np.zeros(len(idx))
    idx = idx[np.argsort(best, kind="stable")]
    return idx if max_features is None else idx[:max_features]


def cosine_from_embeddings(embeddings: Mapping[str, np.ndarray]) -> Callable:
    """A similarity function (rows, features) → cosine matrix from ``{docno: vector}`` (0 for unknown docs)."""
    def sim(topic, rows, feats):
        def mat(ds):
            vs = [embeddings.get(d) for d in ds]
            dim = next((len(v) for v in vs if v is not None), 1)
            M = np.array([np.zeros(dim) if v is None else np.asarray(v, float) for v in vs]).reshape(len(ds), dim)
            n = np.linalg.norm(M, axis=1, keepdims=True)
            return np.divide(M, n, out=np.zeros_like(M), where=n > 0)
        return mat(rows) @ mat(feats).T
    return sim


def cosine_from_texts(texts: Mapping[str, str], **tfidf) -> Callable:
    """A similarity function from document texts: cosine of TF-IDF vectors (``TfidfVectorizer(**tfidf)``
    fitted once on all ``texts``); documents without a text have similarity 0."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    keys = list(texts)
    if not keys:
        raise BayevalInputError("texts: no document texts given")
    vec = TfidfVectorizer(**tfidf)
    M = vec.fit_transform([texts[k] for k in keys])  # rows L2-normalised
    pos = {k: i for i, k in enumerate(keys)}

    def sim(topic, rows, feats):
        def sub(ds):
            ix = np.array([pos.get(d, -1) for d in ds])
            out = M[np.clip(ix, 0, None)]
            mask = (ix >= 0).astype(float)
            return out.multiply(mask[:, None]).tocsr()
        return np.asarray((sub(rows) @ sub(feats).T).todense())
    return sim


def cosine_from_rank_profiles(data: RankData) -> Callable:
    r"""A text-free similarity: the cosine between documents' reciprocal-rank profiles across runs.

    In topic t, document i is described by the vector :math:`v_i = (1/r_{i1}, \dots, 1/r_{iS})` of its
    reciprocal ranks in the S runs of ``data`` (0 where a run does not retrieve it within the data's
    depth), and :math:`\mathrm{sim}(i, j) = v_i\cdot v_j / (\lVert v_i\rVert\lVert v_j\rVert)`. Two documents
    are similar when the same runs rank them, and rank them high — a stand-in for the cluster
    hypothesis where texts are missing (TREC runs without the collection). Documents no run retrieves
    have similarity 0. In the example, x is ranked (1, 2) by runs a, b and y (2, 1), so
    sim(x, y) = (½ + ½)/(1 + ¼) = 0.8; z is ranked by a alone, at 3: sim(z, x) = 1/√1.25 = 0.894.

    Parameters
    ----------
    data : RankData
        The runs whose rankings define the profiles (typically every run of the collection, cut to the
        depth of interest); judgments are not used.

    Returns
    -------
    callable
        ``sim(topic, row_docnos, feature_docnos)`` → (rows, features) matrix.

    Examples
    --------
    >>> from bayeval.data import Run
    >>> a = Run.from_arrays("a", np.array(["1"] * 3), np.array(["x", "y", "z"]), np.array([3.0, 2, 1]))
    >>> b = Run.from_arrays("b", np.array(["1"] * 3), np.array(["y", "x", "w"]), np.array([3.0, 2, 1]))
    >>> sim = cosine_from_rank_profiles(RankData.build([a, b]))
    >>> np.round(sim("1", np.array(["x", "z", "w"]), np.array(["y", "x"])), 3)
    array([[0.8  , 1.   ],
           [0.447, 0.894],
           [0.894, 0.447]])
    """
    if not isinstance(data, RankData):
        raise BayevalInputError(f"data: expected a RankData, got {type(data).__name__}")
    profiles = {}
    for tr in data:
        r = np.asarray(tr.ranks, dtype=np.float64)
        v = np.divide(1.0, r, out=np.zeros_like(r), where=r > 0)
        n = np.linalg.norm(v, axis=1, keepdims=True)
        v = np.divide(v, n, out=np.zeros_like(v), where=n > 0)
        v = np.vstack([v, np.zeros((1, v.shape[1]))])  # the last row: a document no run retrieves
        profiles[tr.topic] = (sp.csr_matrix(v), pd.Index(tr.docnos))

    def sim(topic, rows, feats):
        entry = profiles.get(str(topic))
        if entry is None:
            return np.zeros((len(rows), len(feats)))
        M, index = entry
        ri, fi = index.get_indexer(np.asarray(rows)), index.get_indexer(np.asarray(feats))  # -1: unknown
        return (M[ri] @ M[fi].T).toarray().reshape(len(rows), len(feats))
    return sim


@dataclass(frozen=True, eq=False)
class SimilarityRegression(RelevanceModel):
    r"""Per-topic L2-penalised logistic regression on similarities to feature documents.

    Parameters
    ----------
    X : tuple of ndarray
        Per topic, ``(n_t, m_t)`` similarities of its documents to its feature documents.
    y : tuple of ndarray
        Per topic, ``(n_t,)`` targets in [0, 1].
    topics : tuple of str
    features : tuple of tuple of str
        Per topic, the feature documents' names.
    w : tuple of ndarray, optional
        Per topic row weights (default 1).
    prior : SimilarityPrior

    Notes
    -----
    Parameters ``beta0`` (T,) and ``beta`` (F,) with F = Σ m_t, coords ``"topic:docno"``. Prior
    :math:`\beta_j\sim N(0, 1/\lambda)`, :math:`\beta_0` flat (or Normal(0, intercept_sd)).

    References
    ----------
    B. Carterette, J. Allan (2007). Semiautomatic evaluation of retrieval systems using document
    similarities. CIKM.

    Examples
    --------
    >>> from bayeval.relevance.simulate import simulate_similarity
    >>> m = simulate_similarity([-1.0], [np.array([3.0, -2.0])], n_docs=2000, seed=0)
    >>> np.round(m.find_map()["beta"], 0)
    array([ 3., -2.])
    """

    X: tuple
    y: tuple
    topics: tuple
    features: tuple
    w: tuple | None = None
    prior: SimilarityPrior = SimilarityPrior()
    name = "similarity"

    def __post_init__(self) -> None:
        T = len(self.topics)
        if not (len(self.X) == len(self.y) == len(self.features) == T):
            raise BayevalInputError("X, y, features, topics: need one entry per topic")
        Xs, ys, ws = [], [], []
        for t in range(T):
            X = np.asarray(self.X[t], dtype=np.float64)
            y = np.asarray(self.y[t], dtype=np.float64).reshape(-1)
            if X.ndim != 2 or X.shape[0] != len(y) or X.shape[1] != len(self.features[t]):
                raise BayevalInputError(f"X: topic {self.topics[t]!r} has shape {X.shape}, "
                                        f"expected ({len(y)}, {len(self.features[t])})")
            if np.any((y < 0) | (y > 1)):
                raise BayevalInputError(f"y: topic {self.topics[t]!r} has targets outside [0, 1]")
            w = np.ones(len(y)) if self.w is None else np.asarray(self.w[t], dtype=np.float64).reshape(-1)
            Xs.append(X)
            ys.append(y)
            ws.append(w)
        object.__setattr__(self, "X", tuple(Xs))
        object.__setattr__(self, "y", tuple(ys))
        object.__setattr__(self, "w", tuple(ws))
        object.__setattr__(self, "topics", tuple(str(t) for t in self.topics))
        object.__setattr__(self, "features", tuple(tuple(str(f) for f in fs) for fs in self.features))

    # construction from a collection ------------------------------------------------------------
    @classmethod
    def from_rankdata(cls, data: RankData, similarity: Callable, prior: SimilarityPrior | None = None
                      ) -> SimilarityRegression:
        """Rows = every document of each topic; features = its judged documents
        (:func:`feature_documents`); ``similarity(topic, row_docnos, feature_docnos)`` → (n, m)."""
        prior = SimilarityPrior() if prior is None else prior
        Xs, ys, ws, names = [], [], [], []
        for tr in data:
            f = feature_documents(tr, prior.max_features)
            X = np.asarray(similarity(tr.topic, tr.docnos, tr.docnos[f]), dtype=np.float64).reshape(tr.n_docs, len(f))
            R, N = tr.num_rel, tr.num_nonrel
            y = np.where(tr.judged, tr.relevant.astype(float), (R + 1.0) / (R + N + 2.0))
            w = np.where(tr.judged, 1.0, prior.unjudged_weight)
            Xs.append(X)
            ys.append(y)
            ws.append(w)
            names.append(tuple(tr.docnos[f]))
        return cls(tuple(Xs), tuple(ys), tuple(data.topics), tuple(names), tuple(ws), prior)

    @classmethod
    def from_texts(cls, data: RankData, texts: Mapping[str, str], prior: SimilarityPrior | None = None,
                   **tfidf) -> SimilarityRegression:
        """TF-IDF cosine similarities of document texts ``{docno: text}`` (scikit-learn)."""
        return cls.from_rankdata(data, cosine_from_texts(texts, **tfidf), prior)

    @classmethod
    def from_embeddings(cls, data: RankData, embeddings: Mapping[str, np.ndarray],
                        prior: SimilarityPrior | None = None) -> SimilarityRegression:
        """Cosine similarities of given document embeddings ``{docno: vector}``."""
        return cls.from_rankdata(data, cosine_from_embeddings(embeddings), prior)

    @classmethod
    def from_matrix(cls, data: RankData, docnos: Sequence[str], matrix: np.ndarray,
                    prior: SimilarityPrior | None = None) -> SimilarityRegression:
        """A precomputed similarity ``matrix`` (N, N) over ``docnos`` (0 for documents not listed)."""
        matrix = np.asarray(matrix, dtype=np.float64)
        if matrix.shape != (len(docnos), len(docnos)):
            raise BayevalInputError(f"matrix: expected shape ({len(docnos)}, {len(docnos)}), got {matrix.shape}")
        pos = {d: i for i, d in enumerate(docnos)}
        padded = np.zeros((len(docnos) + 1, len(docnos) + 1))
        padded[:-1, :-1] = matrix

        def sim(topic, rows, feats):
            ri = np.array([pos.get(d, -1) for d in rows], dtype=np.int64)
            fi = np.array([pos.get(d, -1) for d in feats], dtype=np.int64)
            return padded[np.ix_(ri, fi)]
        return cls.from_rankdata(data, sim, prior)

    # the model ---------------------------------------------------------------------------------
    @property
    def param_spec(self) -> ParamSpec:
        T = len(self.topics)
        labels = [f"{t}:{f}" for t, fs in zip(self.topics, self.features, strict=True) for f in fs]
        return ParamSpec(("beta0", "beta"), ((T,), (len(labels),)), (("topic",), ("feature",)),
                         {"topic": list(self.topics), "feature": labels})

    def _offsets(self) -> np.ndarray:
        return np.concatenate([[0], np.cumsum([len(f) for f in self.features])]).astype(np.int64)

    def _prior(self, m: int) -> CoefPrior:
        p0 = 0.0 if self.prior.intercept_sd is None else 1.0 / self.prior.intercept_sd ** 2
        return CoefPrior(np.zeros(m + 1), np.r_[p0, np.full(m, self.prior.penalty)], np.zeros(m + 1), np.zeros(m + 1))

    def mode(self, warm_start: SimilarityRegression | None = None) -> Mode:
        """Newton per topic; with ``warm_start`` (an earlier fitted model with the same prior) a topic
        with the same feature documents, targets and weights reuses its solution."""
        T = len(self.topics)
        off = self._offsets()
        x = np.zeros(T + off[-1])
        blocks, lp, it, ok = [], 0.0, 0, True
        old = getattr(warm_start, "_solution", None) if warm_start is not None else None
        if old is not None and warm_start.prior != self.prior:
            old = None
        where = {} if old is None else {name: i for i, name in enumerate(warm_start.topics)}
        solution = []
        for t in range(T):
            i = where.get(self.topics[t])
            same = i is not None and warm_start.features[i] == self.features[t] and all(
                np.array_equal(getattr(warm_start, k)[i], getattr(self, k)[t]) for k in ("y", "w", "X"))
            if same:
                r = old[i]
            else:
                X = np.hstack([np.ones((len(self.y[t]), 1)), self.X[t]])
                r = logistic_newton(X, self.y[t], self.w[t], self._prior(X.shape[1] - 1))
            solution.append(r)
            idx = np.r_[t, T + off[t] + np.arange(len(r.x) - 1)]
            x[idx] = r.x
            blocks.append((idx, r.neg_hessian))
            lp += r.logpost
            it = max(it, r.n_iter)
            ok &= r.converged
        object.__setattr__(self, "_solution", tuple(solution))
        return Mode(x, tuple(blocks), lp, it, ok)

    def log_posterior(self, beta0, beta) -> float:
        """Log posterior (up to a constant)."""
        off = self._offsets()
        total = 0.0
        for t in range(len(self.topics)):
            X = np.hstack([np.ones((len(self.y[t]), 1)), self.X[t]])
            b = np.r_[beta0[t], beta[off[t]:off[t + 1]]]
            total += logistic_logpost(b, X, self.y[t], self.w[t], self._prior(X.shape[1] - 1))
        return total

    def _judged_rows(self) -> list[np.ndarray]:
        """Per topic, the rows that are observations: target 0 or 1 with weight 1 (judged documents);
        the others (fractional targets of unjudged documents) are pseudo-observations."""
        return [((y == 0) | (y == 1)) & (w == 1) for y, w in zip(self.y, self.w, strict=True)]

    def build_model(self):
        """The same log posterior in PyMC: judged rows as Bernoulli ``relevant``, the fractional targets
        as the Potential ``pseudo_targets``; β ~ Normal(0, 1/√λ), β0 Normal(0, intercept_sd) (or Flat)."""
        import pymc as pm
        import pytensor.tensor as pt

        T = len(self.topics)
        off = self._offsets()
        spec = self.param_spec
        judged = self._judged_rows()
        with pm.Model(coords=spec.coords) as model:
            beta0 = (pm.Flat("beta0", dims="topic") if self.prior.intercept_sd is None
                     else pm.Normal("beta0", 0.0, self.prior.intercept_sd, dims="topic"))
            beta = pm.Normal("beta", 0.0, 1.0 / np.sqrt(self.prior.penalty), dims="feature")
            terms, etas = [], []
            for t in range(T):
                eta = beta0[t] + pt.dot(self.X[t], beta[off[t]:off[t + 1]])
                j = judged[t]
                etas.append(eta[np.flatnonzero(j)])
                u = np.flatnonzero(~j)
                if len(u):
                    y, w, e = self.y[t][u], self.w[t][u], eta[u]
                    terms.append(pt.sum(w * (y * -pt.softplus(-e) + (1 - y) * -pt.softplus(e))))
            pm.Potential("pseudo_targets", pt.sum(pt.stack(terms)) if terms else pt.constant(0.0))
            y_obs = np.concatenate([y[j] for y, j in zip(self.y, judged, strict=True)]) if T else np.zeros(0)
            if len(y_obs):
                pm.Bernoulli("relevant", logit_p=pt.concatenate(etas), observed=y_obs.astype(np.int64))
        return model

    def observed(self):
        """The judged rows of every topic (label ``topic:row``): Bernoulli ``relevant``."""

        judged = self._judged_rows()
        labels = np.array([f"{t}:{i}" for t, j in zip(self.topics, judged, strict=True) for i in np.flatnonzero(j)])
        y = np.concatenate([y[j] for y, j in zip(self.y, judged, strict=True)]) if judged else np.zeros(0)
        return Observed("relevant", "judged_row", labels, y, np.ones(len(y)))

    def linear_predictor(self, params: dict) -> np.ndarray:
        beta0, beta = np.asarray(params["beta0"]), np.asarray(params["beta"])
        off = self._offsets()
        parts = []
        for t, j in enumerate(self._judged_rows()):
            X = self.X[t][j]
            parts.append(beta[..., off[t]:off[t + 1]] @ X.T + beta0[..., t, None])
        return np.concatenate(parts, axis=-1) if parts else np.zeros(beta0.shape[:-1] + (0,))

    def prior_draws(self, size: int, rng: np.random.Generator):
        """β ~ Normal(0, 1/√λ), β0 ~ Normal(0, intercept_sd); None when β0 is flat."""
        if self.prior.intercept_sd is None:
            return None
        return {"beta0": rng.normal(0.0, self.prior.intercept_sd, (size, len(self.topics))),
                "beta": rng.normal(0.0, 1.0 / np.sqrt(self.prior.penalty), (size, int(self._offsets()[-1])))}

    def predict(self, beta0, beta) -> list[np.ndarray]:
        """Per topic p of every row; with draws (beta0 (K, T), beta (K, F)) each is (K, n_t)."""
        beta0, beta = np.asarray(beta0), np.asarray(beta)
        off = self._offsets()
        out = []
        for t in range(len(self.topics)):
            b = beta[..., off[t]:off[t + 1]]
            eta = (self.X[t] @ b.T).T + beta0[..., t, None] if b.ndim == 2 else self.X[t] @ b + beta0[t]
            out.append(expit(eta))
        return out
