# Source: https://github.com/chemprop/chemprop/blob/089a1938fd2fcc5b8832b5b98d71a47b84d1e2df/chemprop/train/predict.py
# Report: audited chemprop v1 predict() as published: the model call is wrapped in `with torch.no_grad():`, so no graph is built during inference
# Shape: same predict() loop; the forward model(mol_batch, features_batch, ...) runs inside `with torch.no_grad():` and preds leave as .data.cpu().numpy() lists
# Expect: near-miss: must be silent

from typing import List

import numpy as np
import torch
from tqdm import tqdm

from chemprop.data import MoleculeDataLoader, MoleculeDataset, StandardScaler
from chemprop.models import MoleculeModel
from chemprop.nn_utils import activate_dropout


def predict(
    model: MoleculeModel,
    data_loader: MoleculeDataLoader,
    disable_progress_bar: bool = False,
    scaler: StandardScaler = None,
    return_unc_parameters: bool = False,
    dropout_prob: float = 0.0,
) -> List[List[float]]:
    """Makes predictions on a dataset with one trained MoleculeModel."""
    model.eval()

    if dropout_prob > 0.0:

        def activate_dropout_(module):
            return activate_dropout(module, dropout_prob)

        model.apply(activate_dropout_)

    preds, var = [], []

    for batch in tqdm(data_loader, disable=disable_progress_bar, leave=False):
        batch: MoleculeDataset
        mol_batch = batch.batch_graph()
        features_batch = batch.features()
        atom_descriptors_batch = batch.atom_descriptors()
        atom_features_batch = batch.atom_features()
        bond_features_batch = batch.bond_features()

        # Make predictions
        with torch.no_grad():
            batch_preds = model(
                mol_batch,
                features_batch,
                atom_descriptors_batch,
                atom_features_batch,
                bond_features_batch,
            )

        batch_preds = batch_preds.data.cpu().numpy()

        if model.loss_function == "mve":
            batch_preds, batch_var = np.split(batch_preds, 2, axis=1)
        elif model.loss_function == "dirichlet" and model.classification:
            batch_alphas = np.reshape(batch_preds, [batch_preds.shape[0], batch_preds.shape[1] // 2, 2])
            batch_preds = batch_alphas[:, :, 1] / np.sum(batch_alphas, axis=2)

        # Inverse scale if regression
        if scaler is not None:
            batch_preds = scaler.inverse_transform(batch_preds)
            if model.loss_function == "mve":
                batch_var = batch_var * scaler.stds ** 2

        # Collect vectors
        preds.extend(batch_preds.tolist())
        if model.loss_function == "mve":
            var.extend(batch_var.tolist())

    if return_unc_parameters and model.loss_function == "mve":
        return preds, var
    return preds
