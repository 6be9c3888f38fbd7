# Source: https://github.com/MPoL-dev/MPoL/issues/133
# Report: in the cross-validation loop all K (train, test) copies of the dataset were put on the GPU at once, likely not fitting in memory; maintainers agreed to send one fold at a time to the GPU and results back to CPU
# Shape: a helper builds a list of K (train.to(device), test.to(device)) pairs before the fold loop, so every fold's data stays on the GPU for the whole cross-validation
# Expect: TML004 line 18
import numpy as np
import torch

from mpol.crossval import RandomCellSplitGridded
from mpol.precomposed import SimpleNet
from mpol.training import TrainTest


def make_kfold_datasets(dataset, kfolds, device, seed=42):
    """Split the gridded visibilities into K (train, test) pairs, ready for training."""
    split_iterator = RandomCellSplitGridded(dataset=dataset, k=kfolds, seed=seed)
    kfold_datasets = []
    for train_set, test_set in split_iterator:
        kfold_datasets.append((train_set.to(device), test_set.to(device)))  # expect: TML004
    return kfold_datasets


def cross_validate(coords, dataset, imager, config, device="cuda"):
    kfold_datasets = make_kfold_datasets(dataset, config["kfolds"], device)
    all_scores = []
    loss_histories = []
    for kk, (train_set, test_set) in enumerate(kfold_datasets):
        model = SimpleNet(coords=coords, nchan=imager.nchan).to(device)
        if config.get("start_from_dirty"):
            model.load_state_dict(torch.load(config["dirty_state"], map_location=device))
        optimizer = torch.optim.Adam(model.parameters(), lr=config["learn_rate"])
        trainer = TrainTest(
            imager=imager,
            optimizer=optimizer,
            epochs=config["epochs"],
            lambda_guess=config.get("lambda_guess"),
            verbose=False,
        )
        loss, loss_history = trainer.train(model, train_set)
        loss_histories.append(loss_history)
        score = trainer.test(model, test_set)
        all_scores.append(float(score))
        print(f"fold {kk}: train loss {loss:.4f}, test score {score:.4f}")
    return float(np.mean(all_scores)), all_scores, loss_histories
