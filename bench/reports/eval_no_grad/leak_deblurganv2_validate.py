# Source: https://github.com/VITA-Group/DeblurGANv2/issues/15
# Report: Trainer._validate ran the generator (and the adversarial loss) over the validation set without torch.no_grad(); maintainers agreed and said they would fix it
# Shape: a Trainer method loops over the val dataset and calls the generator with grad enabled; metrics go through .item() into a metric counter, so the cost is a training-sized peak on every validation step
# Expect: TML003 line 27
import tqdm


class Trainer:
    def __init__(self, config, netG, adv_trainer, criterionG, model, metric_counter, val_dataset):
        self.config = config
        self.netG = netG
        self.adv_trainer = adv_trainer
        self.criterionG = criterionG
        self.model = model
        self.metric_counter = metric_counter
        self.val_dataset = val_dataset
        self.adv_lambda = config["model"]["adv_lambda"]

    def _validate(self, epoch):
        self.metric_counter.clear()
        epoch_size = self.config.get("val_batches_per_epoch") or len(self.val_dataset)
        tq = tqdm.tqdm(self.val_dataset, total=epoch_size)
        tq.set_description("Validation")
        i = 0
        for data in tq:
            inputs, targets = self.model.get_input(data)
            outputs = self.netG(inputs)  # expect: TML003
            loss_content = self.criterionG(outputs, targets)
            loss_adv = self.adv_trainer.loss_g(outputs, targets)
            loss_G = loss_content + self.adv_lambda * loss_adv
            self.metric_counter.add_losses(loss_G.item(), loss_content.item())
            curr_psnr, curr_ssim, img_for_vis = self.model.get_images_and_metrics(inputs, outputs, targets)
            self.metric_counter.add_metrics(curr_psnr, curr_ssim)
            if not i:
                self.metric_counter.add_image(img_for_vis, tag="val")
            i += 1
            if i > epoch_size:
                break
        tq.close()
        self.metric_counter.write_to_tensorboard(epoch, validation=True)
