# Source: https://github.com/linyao1999/ML_MJO_Hovmoller/blob/5f978e72851bd2f5dbfb28e2145b01d8c0da4dec/script/model/src/inference/predict.py
# Report: audit: predict() runs the CNN over the whole test loader under no_grad and appends each batch's outputs, still on the GPU, to a list it returns; the caller concatenates the list only afterwards, so every prediction of the test period stays in device memory
# Shape: small inference helper returning a list of model(inputs.cuda()) outputs, called by a script that loads the checkpoint, cats the list and writes an xarray/netCDF file
# Expect: TML004 line 23
import argparse

import numpy as np
import torch
import xarray as xr
from torch.utils.data import DataLoader

from src.data_prepare.dataset import load_test_dataset
from src.models.cnn import build_cnn


def predict(model, data_loader):
    model.eval()
    predictions = []
    with torch.no_grad():
        for batch in data_loader:
            inputs, targets = batch
            outputs = model(inputs.cuda())
            predictions.append(outputs)  # expect: TML004
    return predictions


def save_predictions(pred, target, times, path):
    ds = xr.Dataset(
        {
            "rmm_pred": (("time", "component"), pred),
            "rmm_true": (("time", "component"), target),
        },
        coords={"time": times, "component": ["RMM1", "RMM2"]},
    )
    ds.to_netcdf(path)
    print(f"saved {pred.shape[0]} predictions to {path}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--lead", type=int, default=15)
    parser.add_argument("--out", default="predictions.nc")
    parser.add_argument("--batch-size", type=int, default=256)
    args = parser.parse_args()

    dataset, times = load_test_dataset(lead=args.lead)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=False, num_workers=4)

    model = build_cnn(in_channels=dataset.n_channels, out_dim=2).cuda()
    state = torch.load(args.checkpoint, map_location="cuda")
    model.load_state_dict(state)

    outputs = predict(model, loader)
    pred = torch.cat(outputs, dim=0).cpu().numpy()
    target = dataset.targets.numpy()
    corr = [np.corrcoef(pred[:, i], target[:, i])[0, 1] for i in range(2)]
    print(f"lead {args.lead} d: bivariate corr RMM1={corr[0]:.3f} RMM2={corr[1]:.3f}")
    save_predictions(pred, target, times, args.out)


if __name__ == "__main__":
    main()
