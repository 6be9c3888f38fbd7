# Source: https://github.com/TWK2022/TimeSeriesForecasting/blob/bb9c1211784c30979ed83066f9ed2071ae552c28/block/val_get.py
# Report: audited correct idiom: the forecasting validation collects every window's prediction with pred.extend(model(series_batch).detach().cpu()) under torch.no_grad() and stacks once after the loop; this rewrite is the near-by bug where .cpu() is dropped and the targets are moved to the GPU too
# Shape: val_get keeps its shape (no_grad, per-window extend into pred/true, torch.stack after the loop, per-column MAE/MSE); the extended rows are detached but stay CUDA tensors, so the whole validation set's forecasts and targets pile up on the GPU
# Expect: TML004 line 25; TML004 line 26
import torch
import tqdm


def metric(pred, true):
    mae = torch.mean(abs(pred - true))
    mse = torch.mean(torch.square(pred - true))
    return mae, mse


def val_get(args, val_dataloader, model, loss, data_dict, ema=None):
    tqdm_len = len(val_dataloader.dataset) // max(args.batch // args.device_number, 1)
    tqdm_show = tqdm.tqdm(total=tqdm_len, mininterval=0.2)
    with torch.no_grad():
        model = ema.ema if args.ema else model.eval()
        pred = []
        true = []
        for index, (series_batch, true_batch) in enumerate(val_dataloader):
            series_batch = series_batch.to(args.device, non_blocking=args.latch)
            true_batch = true_batch.to(args.device, non_blocking=args.latch)
            pred.extend(model(series_batch).detach())  # expect: TML004
            true.extend(true_batch)  # expect: TML004
            tqdm_show.update(1)
        tqdm_show.close()
        pred = torch.stack(pred, dim=0)
        true = torch.stack(true, dim=0)
        val_loss = loss(pred, true)
        for i in range(pred.shape[1]):
            column = args.output_column[i]
            _mae, _mse = metric(pred[:, i], true[:, i])
            print(f'| {column} | val_mae:{_mae:.4f} | val_mse:{_mse:.4f} |')
            pred[:, i] = (pred[:, i] - data_dict['mean_output'][i]) / data_dict['std_output'][i]
            true[:, i] = (true[:, i] - data_dict['mean_output'][i]) / data_dict['std_output'][i]
        mae, mse = metric(pred, true)
        print(f'| all | val_loss:{val_loss:.4f} | val_mae:{mae:.4f} | val_mse:{mse:.4f} |')
    return val_loss, mae, mse
