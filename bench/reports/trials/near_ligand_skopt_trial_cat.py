# Source: https://github.com/jkarolczak/ligand-classification/pull/74
# Report: PR adding a scikit-optimize hyperparameter search (scripts/tune_hparams.py) that builds a fresh sparse-conv model per trial and fights memory with gc.collect(); near-miss = the evaluation gathers per-batch CPU chunks in lists and concatenates once
# Shape: inside the per-trial objective, the no_grad test loop appends CPU copies of preds/labels to lists (fresh each epoch) and calls torch.cat once after the loop; the per-trial model and optimizer are locals of the objective
# Expect: near-miss: must be silent
import gc

import skopt
import torch
from torch.utils.data import DataLoader

import log
import models
from data import collation_fn, dataset_split, make_sparse


def make_objective(cfg, dataset, device):
    cpu = torch.device("cpu")

    def evaluate(hparams):
        train_cfg = dict(cfg["train_cfg"], **dict(zip(cfg["hparams"].keys(), hparams)))
        run = log.get_run()
        train, test = dataset_split(dataset=dataset)
        train_dl = DataLoader(train, batch_size=int(train_cfg["batch_size"]), collate_fn=collation_fn, shuffle=True)
        test_dl = DataLoader(test, batch_size=int(train_cfg["batch_size"]), collate_fn=collation_fn)

        model = models.create(train_cfg["model"]).to(device)
        optimizer = torch.optim.AdamW(model.parameters(), lr=float(train_cfg["lr"]))
        criterion = torch.nn.CrossEntropyLoss()
        accum_iter = int(train_cfg["accum_iter"])

        for epoch in range(train_cfg["epochs"]):
            model.train()
            for idx, (coords, feats, labels) in enumerate(train_dl):
                labels = labels.to(device)
                batch = make_sparse(feats, coords, device)
                labels_hat = model(batch)
                loss = criterion(labels_hat, labels) / accum_iter
                loss.backward()
                if not idx % accum_iter:
                    optimizer.step()
                    optimizer.zero_grad()
                del batch, labels, labels_hat
                gc.collect()

            model.eval()
            with torch.no_grad():
                label_chunks, pred_chunks = [], []
                for coords, feats, labels in test_dl:
                    batch = make_sparse(feats, coords, device)
                    pred_chunks.append(model(batch).to(cpu))
                    label_chunks.append(labels.to(cpu))
                groundtruth = torch.cat(label_chunks, 0)
                predictions = torch.cat(pred_chunks, 0)
            log.epoch(run=run, preds=predictions, target=groundtruth, epoch_num=epoch)

        score = run["eval/accuracy"].fetch_values().max().value
        run.stop()
        return -score

    return evaluate


def search(cfg, dataset, dims, device):
    objective = make_objective(cfg, dataset, device)
    return skopt.gp_minimize(objective, dims, n_calls=cfg["n_calls"]).x
