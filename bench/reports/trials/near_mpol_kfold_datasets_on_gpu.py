# Source: https://github.com/MPoL-dev/MPoL/issues/133
# Report: all K cross-validation splits were moved to the GPU together
# Shape: the split list holds CPU datasets; each fold is moved to the GPU inside the fold loop and deleted after training and scoring
# Expect: near-miss: must be silent
import numpy as np
import torch

from mpol.crossval import RandomCellSplitGridded
from mpol.precomposed import SimpleNet
from mpol.training import TrainTest


def make_kfold_datasets(dataset, kfolds, seed=42):
    """Split the gridded visibilities into K (train, test) pairs; they stay on the CPU."""
    split_iterator = RandomCellSplitGridded(dataset=dataset, k=kfolds, seed=seed)
    kfold_datasets = []
    for train_set, test_set in split_iterator:
        kfold_datasets.append((train_set, test_set))
    return kfold_datasets


def cross_validate(coords, dataset, imager, config, device="cuda"):
    kfold_datasets = make_kfold_datasets(dataset, config["kfolds"])
    all_scores = []
    loss_histories = []
    for kk, (train_cpu, test_cpu) in enumerate(kfold_datasets):
        # only the current fold is sent to the GPU
        train_set, test_set = train_cpu.to(device), test_cpu.to(device)
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
        del train_set, test_set, model, optimizer, trainer
    return float(np.mean(all_scores)), all_scores, loss_histories
