# Source: https://github.com/JonnyD1117/RGB-D-Plant-Segmentation/blob/725cfa84563f4945aa15fe6d79ed225646b74986/RGB_Segmentation/trainers/optuna_trainer.py
# Report: correct idiom in the repo's Optuna UNet (Carvana) objective: the incremental mean of the validation loss, mean = mean + (val_loss - mean) / ctr, is computed inside torch.no_grad()
# Shape: the running mean is loop-carried and lives across the validation loop, but every term is produced under a grad-disabled context, so no graph links the steps; trial.report gets a float
# Expect: near-miss: must be silent
import optuna
import torch
from optuna.trial import TrialState
from torch import optim
from torch.optim.lr_scheduler import ReduceLROnPlateau
from torch.utils.data import DataLoader
from tqdm import tqdm

from RGB_Segmentation.data.Carvana_Dataset.CarvanaDS import CarvanaData
from RGB_Segmentation.data.Carvana_Dataset.ValDS import ValidationData
from RGB_Segmentation.models.losses.bce_dice_loss import DiceBCELoss
from RGB_Segmentation.models.unets.off_the_shelf_unet_w_sigmoid import UNet


def objective(trial):
    epochs = trial.suggest_int("epochs", 30, 100)
    lr = trial.suggest_float("lr", 1e-5, 1e-1, log=True)
    batch_size = trial.suggest_int("batch_size", 5, 15)
    val_batch_size = trial.suggest_int("val_batch_size", 5, 10)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    model = UNet().to(device)
    optimizer = optim.Adam(model.parameters(), lr=lr)
    scheduler = ReduceLROnPlateau(optimizer, mode="min", factor=0.1, patience=5)
    loss_criterion = DiceBCELoss().to(device)

    carvana_dl = DataLoader(CarvanaData(test=False), batch_size, shuffle=True, num_workers=4, drop_last=True)
    validation_dl = DataLoader(ValidationData(), val_batch_size, shuffle=False, num_workers=4, drop_last=True)

    mean_val_loss = torch.tensor(0.0)
    for epoch in range(epochs):
        model.train()
        for image, mask in tqdm(carvana_dl):
            image, mask = image.to(device), mask.to(device)
            pred = model(image)
            loss = loss_criterion(pred, mask)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

        model.eval()
        with torch.no_grad():
            mean_val_loss = 0
            val_ctr = 1.0
            for val_img, val_mask in tqdm(validation_dl):
                val_img, val_mask = val_img.to(device), val_mask.to(device)
                val_pred = model(val_img)
                val_loss = loss_criterion(val_pred, val_mask)
                mean_val_loss = mean_val_loss + (val_loss - mean_val_loss) / val_ctr
                val_ctr += 1

        scheduler.step(mean_val_loss)
        trial.report(float(mean_val_loss), epoch)
        if trial.should_prune():
            raise optuna.TrialPruned()

    return float(mean_val_loss)


if __name__ == "__main__":
    study = optuna.create_study(direction="minimize")
    study.optimize(objective, n_trials=75)
    complete = study.get_trials(deepcopy=False, states=[TrialState.COMPLETE])
    print("completed trials:", len(complete))
    print("best value:", study.best_trial.value)
    for key, value in study.best_trial.params.items():
        print(f"    {key}: {value}")
