# Source: https://github.com/sasaki-yamagata/GCN_module/blob/21795c8d4a377110ab100d5dcc1d828a5033a1c7/GCN/common/method.py
# Report: predict() of the HOMO/LUMO molecular GCN rewritten to collect per-batch [y, pred] rows in lists and concatenate once per loader
# Shape: torch.cat([y, pred], dim=1) only joins the current batch; rows are moved to the CPU before append and a single torch.cat runs after each loop
# Expect: near-miss: must be silent
import itertools

import pandas as pd
import torch
from sklearn.metrics import mean_absolute_error, mean_squared_error, r2_score


class Config(dict):
    pass


config = Config(device="cuda" if torch.cuda.is_available() else "cpu")


def predict(model, loader_train, loader_test):
    model.eval()
    with torch.no_grad():
        n_out = loader_train.dataset.y.shape[1]
        rows_train = []
        for x_data_train, y_train in loader_train:
            x_data_train = x_data_train.to(config["device"])
            y_train = y_train.to(config["device"])
            pre_train = model(x_data_train.x, x_data_train.edge_index, x_data_train.feature_size_list)
            rows_train.append(torch.cat([y_train, pre_train], dim=1).cpu())
        result_train = torch.cat(rows_train, dim=0) if rows_train else torch.zeros((0, n_out * 2))

        rows_test = []
        for x_data_test, y_test in loader_test:
            x_data_test = x_data_test.to(config["device"])
            y_test = y_test.to(config["device"])
            pre_test = model(x_data_test.x, x_data_test.edge_index, x_data_test.feature_size_list)
            rows_test.append(torch.cat([y_test, pre_test], dim=1).cpu())
        result_test = torch.cat(rows_test, dim=0) if rows_test else torch.zeros((0, n_out * 2))
    return result_train, result_test


def accuracy(target_props, result_train, result_test):
    metrics = {"mse": mean_squared_error, "mae": mean_absolute_error, "r2": r2_score}
    n_output = len(target_props)
    result_train = result_train.detach().to("cpu")
    result_test = result_test.detach().to("cpu")
    table = {}
    for name, fn in metrics.items():
        table[name] = []
        for i in range(n_output):
            table[name].append(fn(result_train[:, i], result_train[:, i + n_output]))
            table[name].append(fn(result_test[:, i], result_test[:, i + n_output]))
    index = [f"{phase}_accuracy_{prop}" for prop, phase in itertools.product(target_props, ["train", "test"])]
    return pd.DataFrame(table, index=index)


def evaluate_and_save(model, loader_train, loader_test, target_props, save_folder):
    result_train, result_test = predict(model, loader_train, loader_test)
    df_accuracy = accuracy(target_props, result_train, result_test)
    df_accuracy.to_csv(f"{save_folder}/accuracy_{'_'.join(target_props)}.csv")
    return df_accuracy
