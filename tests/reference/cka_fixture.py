"""Generates the CKA golden fixture: tests/fixtures/cka_{x,y}.npy and tests/fixtures/cka_expected.json.

Data and functions follow Kornblith et al. (2019), "Similarity of Neural Network Representations Revisited",
and the CKA notebook that accompanies it (google-research/google-research, representation_similarity/Demo.ipynb):
    np.random.seed(1337); X = np.random.randn(100, 10); Y = X + np.random.randn(100, 10)
for which the notebook reports linear CKA 0.55761 and debiased linear CKA 0.51346.

Run from the crate root: .venv/bin/python tests/reference/cka_fixture.py
"""
import json
import os

import numpy as np


def gram_linear(x):
    return x.dot(x.T)


def gram_rbf(x, threshold=1.0):
    dot_products = x.dot(x.T)
    sq_norms = np.diag(dot_products)
    sq_distances = -2 * dot_products + sq_norms[:, None] + sq_norms[None, :]
    sq_median_distance = np.median(sq_distances)
    return np.exp(-sq_distances / (2 * threshold ** 2 * sq_median_distance))


def center_gram(gram):
    gram = gram.copy()
    means = np.mean(gram, 0, dtype=np.float64)
    means -= np.mean(means) / 2
    gram -= means[:, None]
    gram -= means[None, :]
    return gram


def cka(gram_x, gram_y):
    gram_x = center_gram(gram_x)
    gram_y = center_gram(gram_y)
    scaled_hsic = gram_x.ravel().dot(gram_y.ravel())
    return scaled_hsic / (np.linalg.norm(gram_x) * np.linalg.norm(gram_y))


def _debiased_dot_product_similarity_helper(xty, sum_squared_rows_x, sum_squared_rows_y, squared_norm_x,
                                            squared_norm_y, n):
    return (xty - n / (n - 2.) * sum_squared_rows_x.dot(sum_squared_rows_y)
            + squared_norm_x * squared_norm_y / ((n - 1) * (n - 2)))


def feature_space_linear_cka(features_x, features_y, debiased=False):
    features_x = features_x - np.mean(features_x, 0, keepdims=True)
    features_y = features_y - np.mean(features_y, 0, keepdims=True)
    dot_product_similarity = np.linalg.norm(features_x.T.dot(features_y)) ** 2
    normalization_x = np.linalg.norm(features_x.T.dot(features_x))
    normalization_y = np.linalg.norm(features_y.T.dot(features_y))
    if debiased:
        n = features_x.shape[0]
        sum_squared_rows_x = np.einsum('ij,ij->i', features_x, features_x)
        sum_squared_rows_y = np.einsum('ij,ij->i', features_y, features_y)
        squared_norm_x = np.sum(sum_squared_rows_x)
        squared_norm_y = np.sum(sum_squared_rows_y)
        dot_product_similarity = _debiased_dot_product_similarity_helper(
            dot_product_similarity, sum_squared_rows_x, sum_squared_rows_y, squared_norm_x, squared_norm_y, n)
        normalization_x = np.sqrt(_debiased_dot_product_similarity_helper(
            normalization_x ** 2, sum_squared_rows_x, sum_squared_rows_x, squared_norm_x, squared_norm_x, n))
        normalization_y = np.sqrt(_debiased_dot_product_similarity_helper(
            normalization_y ** 2, sum_squared_rows_y, sum_squared_rows_y, squared_norm_y, squared_norm_y, n))
    return dot_product_similarity / (normalization_x * normalization_y)


def main():
    np.random.seed(1337)
    X = np.random.randn(100, 10)
    Y = X + np.random.randn(100, 10)
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'fixtures')
    os.makedirs(out, exist_ok=True)
    np.save(os.path.join(out, 'cka_x.npy'), X)
    np.save(os.path.join(out, 'cka_y.npy'), Y)
    expected = {
        'linear': feature_space_linear_cka(X, Y),
        'debiased': feature_space_linear_cka(X, Y, debiased=True),
        'linear_gram': cka(gram_linear(X), gram_linear(Y)),
        'rbf_0.5': cka(gram_rbf(X, 0.5), gram_rbf(Y, 0.5)),
        'rbf_1.0': cka(gram_rbf(X, 1.0), gram_rbf(Y, 1.0)),
        'rbf_2.0': cka(gram_rbf(X, 2.0), gram_rbf(Y, 2.0)),
    }
    with open(os.path.join(out, 'cka_expected.json'), 'w') as f:
        json.dump({k: float(v) for k, v in expected.items()}, f, indent=2)
        f.write('\n')
    print(json.dumps({k: float(v) for k, v in expected.items()}))


if __name__ == '__main__':
    main()
